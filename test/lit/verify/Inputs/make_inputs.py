"""Regenerate the `.ttgir` inputs of the tlx-verify lit tests (CPU only, ~1 s per kernel).

Hand-aliased Gluon kernels — no TLX annotations, memory shared with `_reinterpret` exactly as the
upstream Gluon tutorials do it — compiled for sm_90a / sm_100a; `compiled.asm["ttgir"]` is the custom-form
text Triton's cache and TRITON_KERNEL_DUMP hold. The `*_bad` kernels carry one deliberate aliasing bug each.

    python test/lit/verify/Inputs/make_inputs.py      # rewrites Inputs/*.ttgir and bugs/Inputs/*.ttgir
"""
import os
import re
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory)
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from tlx_alias import _triton as compat
from tlx_alias.kernels._common import tensordesc

HERE = os.path.dirname(os.path.abspath(__file__))


# --- Blackwell: S (fp32) borrowed as P (bf16, col_stride 2: one column each, in the first half of S's
# columns) and alpha (S's last column), per buffer (tutorial style): P and alpha are disjoint ---------------
@gluon.jit
def fa_borrow_ok(x_ptr, n_iter, NUM: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr):
    s_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    p_layout: gl.constexpr = TensorMemoryLayout((BM, BN // 2), col_stride=2)
    a_layout: gl.constexpr = TensorMemoryLayout((BM, 1), col_stride=1)
    s_tmem = allocate_tensor_memory(gl.float32, [NUM, BM, BN], s_layout)
    s_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], s_layout, 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [BM, BN // 2], p_layout, 4)
    a_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, 1], a_layout, 4)
    acc = gl.zeros([BM, BN], gl.float32, s_reg)
    for k in range(n_iter):
        s = s_tmem.index(k % NUM)
        s.store(acc)
        v = gl.sum(s.load(s_reg), axis=1)
        p = compat.reinterpret(s, gl.bfloat16, [BM, BN // 2], p_layout)
        p.store(gl.full([BM, BN // 2], 1.0, gl.bfloat16, p_reg))
        alpha = compat.reinterpret(s, gl.float32, [BM, BN], a_layout).slice(BN - 1, 1)
        alpha.store(gl.convert_layout(v[:, None], a_reg))
        pv = gl.convert_layout(gl.sum(p.load(p_reg).to(gl.float32), axis=1)[:, None], a_reg)
        w = gl.sum(pv * alpha.load(a_reg), axis=1)
        acc += gl.convert_layout(w, gl.SliceLayout(1, s_reg))[:, None]
    offs = gl.arange(0, BN, layout=gl.SliceLayout(0, s_reg))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


# --- Blackwell bug: P reinterpreted over the whole S allocation with packed bf16 (col_stride 1): P[i] is 64
# columns, so P[1] lands inside S[0] — cross-index overlap (P3). The dtype change that silently breaks it.
@gluon.jit
def fa_packed_p_bad(x_ptr, n_iter, NUM: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr):
    s_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    s_tmem = allocate_tensor_memory(gl.float32, [NUM, BM, BN], s_layout)
    p_tmem = compat.reinterpret(s_tmem, gl.bfloat16, [NUM, BM, BN], s_layout)
    s_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], s_layout, 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [BM, BN], s_layout, 4)
    acc = gl.zeros([BM, BN], gl.float32, s_reg)
    for k in range(n_iter):
        i = k % NUM
        s = s_tmem.index(i)
        s.store(acc)
        p = p_tmem.index(i)
        p.store(s.load(s_reg).to(gl.bfloat16))
        acc += p.load(p_reg).to(gl.float32)
    offs = gl.arange(0, BN, layout=gl.SliceLayout(0, s_reg))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


# --- Hopper: operand ring with a carried ring counter; the epilogue tile borrows the ring's bytes ----------
@gluon.jit
def gemm_epilogue_ok(x_ptr, n_iter, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr, BN: gl.constexpr,
                     C_DTYPE: gl.constexpr):
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    c_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], C_DTYPE)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_layout)
    acc = gl.zeros([BM, BK], gl.float32, blocked)
    idx = 0
    for k in range(n_iter):
        a = a_ring.index(idx)
        a.store(acc.to(gl.bfloat16))
        acc += a.load(blocked).to(gl.float32)
        idx += 1
        idx = gl.where(idx == STAGES, 0, idx)
    # epilogue: the ring is dead, its bytes hold the output tile
    c_smem = compat.reinterpret(a_ring, C_DTYPE, [BM, BN], c_layout)
    c_smem.store(gl.zeros([BM, BN], C_DTYPE, blocked))
    out = c_smem.load(blocked)
    offs = gl.arange(0, BN, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(out.to(gl.float32), axis=0) + gl.sum(gl.sum(acc, axis=1), axis=0))


# --- Hopper bug: the ring counter wraps at STAGES + 1, one past the last buffer (P5) ------------------------
@gluon.jit
def ring_wrap_bad(x_ptr, n_iter, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr):
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_layout)
    acc = gl.zeros([BM, BK], gl.float32, blocked)
    for k in range(n_iter):
        a = a_ring.index(k % (STAGES + 1))
        a.store(acc.to(gl.bfloat16))
        acc += a.load(blocked).to(gl.float32)
    offs = gl.arange(0, BK, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


# --- Blackwell: warp-specialized producer/consumer over an SMEM ring (captures into partitions) ------------
@gluon.jit
def _ws_producer(ring, n_iter, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr):
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [1, 1], [1, 0])
    idx = 0
    for k in range(n_iter):
        ring.index(idx).store(gl.zeros([BM, BK], gl.bfloat16, blocked))
        idx = (idx + 1) % STAGES


@gluon.jit
def _ws_consumer(ring, x_ptr, n_iter, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr):
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    acc = gl.zeros([BM, BK], gl.float32, blocked)
    for k in range(n_iter):
        acc += ring.index(k % STAGES).load(blocked).to(gl.float32)
    offs = gl.arange(0, BK, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def ws_ring_ok(x_ptr, n_iter, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr):
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_layout)
    gl.warp_specialize([(_ws_consumer, (ring, x_ptr, n_iter, STAGES, BM, BK)),
                        (_ws_producer, (ring, n_iter, STAGES, BM, BK))], [1], [24])


# --- Blackwell: the upstream attention tutorial's borrowing helpers, in triton 3.6's Gluon API -------------
@gluon.jit
def _borrow_s_as_p(s_tmem, BM: gl.constexpr, BN: gl.constexpr):
    # fp32 S reinterpreted as 16-bit P packed two per column, then the first BN elements: BN/2 columns
    p_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    return compat.reinterpret(s_tmem, gl.bfloat16, [BM, 2 * BN], p_layout).slice(0, BN)


@gluon.jit
def _borrow_s_as_alpha(s_tmem, BM: gl.constexpr, BN: gl.constexpr, _W_COL: gl.constexpr):
    # _W_COL >= BN is the seeded bug: the reinterpret claims more columns than S's buffer has
    layout: gl.constexpr = TensorMemoryLayout((BM, 1), col_stride=1)
    WIDTH: gl.constexpr = BN if _W_COL < BN else 2 * BN
    return compat.reinterpret(s_tmem, gl.float32, [BM, WIDTH], layout).slice(_W_COL, 1)


@gluon.jit
def fa_tutorial_borrow(x_ptr, n_tiles, n_iter, BM: gl.constexpr, BN: gl.constexpr, ALPHA_COL: gl.constexpr):
    s_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    s_tmem = allocate_tensor_memory(gl.float32, [2, BM, BN], s_layout)
    s_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], s_layout, 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [BM, BN], TensorMemoryLayout((BM, BN), col_stride=1), 4)
    a_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, 1], TensorMemoryLayout((BM, 1), col_stride=1), 4)
    acc = gl.zeros([BM, BN], gl.float32, s_reg)
    s_index = 0
    s_phase = 0
    for tile in range(gl.program_id(0), n_tiles, gl.num_programs(0)):   # persistent outer loop
        for k in range(n_iter):
            s = s_tmem.index(s_index)
            s.store(acc)
            p = _borrow_s_as_p(s, BM, BN)
            p.store(s.load(s_reg).to(gl.bfloat16))
            alpha = _borrow_s_as_alpha(s, BM, BN, ALPHA_COL)
            m_i = _borrow_s_as_alpha(s, BM, BN, ALPHA_COL + 1)
            alpha.store(gl.zeros([BM, 1], gl.float32, a_reg) + s_phase.to(gl.float32))
            m_i.store(alpha.load(a_reg))
            acc += p.load(p_reg).to(gl.float32)
            # the tutorial's BarrierCounter.increment
            next_index = s_index + 1
            rollover = next_index == 2
            s_index = gl.where(rollover, 0, next_index)
            s_phase = gl.where(rollover, s_phase ^ 1, s_phase)
    offs = gl.arange(0, BN, layout=gl.SliceLayout(0, s_reg))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


# --- Hopper: after the k-loop, the slot of its last step, `(n - 1) % STAGES` (the attention tutorials' last
# P V). Bug: with n = n_iter the loop may run zero times and the slot is -1 (P5); clean: n = max(n_iter, 1).
@gluon.jit
def last_slot_after_loop(x_ptr, n_iter, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr,
                         AT_LEAST_ONE: gl.constexpr):
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_layout)
    acc = gl.zeros([BM, BK], gl.float32, blocked)
    n = gl.maximum(n_iter, 1) if AT_LEAST_ONE else n_iter
    for k in range(n):
        a = a_ring.index(k % STAGES)
        a.store(acc.to(gl.bfloat16))
        acc += a.load(blocked).to(gl.float32)
    last = (n - 1) % STAGES
    acc += a_ring.index(last).load(blocked).to(gl.float32)
    offs = gl.arange(0, BK, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def last_slot_after_while(x_ptr, n_iter, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr,
                          GUARD: gl.constexpr):
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_layout)
    acc = gl.zeros([BM, BK], gl.float32, blocked)
    k = 0
    while k < n_iter:
        a = a_ring.index(k % STAGES)
        a.store(acc.to(gl.bfloat16))
        acc += a.load(blocked).to(gl.float32)
        k += 1
    last = gl.maximum(k - 1, 0) % STAGES if GUARD else (k - 1) % STAGES
    acc += a_ring.index(last).load(blocked).to(gl.float32)
    offs = gl.arange(0, BK, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def last_slot_after_inner_loop(x_ptr, n_tiles, k_steps, STAGES: gl.constexpr, BM: gl.constexpr,
                               BK: gl.constexpr, GUARD: gl.constexpr):
    # a persistent nest: the ring counter runs on across tiles; each tile's epilogue reads the last slot
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    a_ring = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_layout)
    acc = gl.zeros([BM, BK], gl.float32, blocked)
    c = 0
    for t in range(n_tiles):
        for k in range(k_steps):
            a_ring.index(c % STAGES).store(acc.to(gl.bfloat16))
            c += 1
        last = gl.maximum(c - 1, 0) % STAGES if GUARD else (c - 1) % STAGES
        acc += a_ring.index(last).load(blocked).to(gl.float32)
    offs = gl.arange(0, BK, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


# --- Hopper, a cluster of 2 CTAs (the API of Triton 3.8 and 3.9): every CTA's ring slot receives a multicast TMA load, and
# the epilogue tile borrows slot 0 with no cluster barrier, so the next tile's load a peer CTA multicasts may land
# in it while this CTA still stores or the TMA store reads it: a race between CTAs. The checker models one CTA.
@gluon.jit
def cluster_multicast_ring(a_desc, c_desc, K, T, STAGES: gl.constexpr, BM: gl.constexpr, BK: gl.constexpr):
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], [[0, 0]])   # both CTAs: the whole tile
    a_ring = gl.allocate_shared_memory(gl.float16, [STAGES, BM, BK], a_desc.layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
    it = 0
    for t in range(T):
        acc = gl.zeros([BM, BK], gl.float32, blocked)
        for k in range(gl.cdiv(K, BK)):
            s = it % STAGES
            mbarrier.expect(ready.index(s), a_desc.nbytes_per_cta)
            tma.async_load(a_desc, [t * BM, k * BK], ready.index(s), a_ring.index(s), multicast=True)
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc += a_ring.index(s).load(blocked).to(gl.float32)
            it += 1
        c = compat.reinterpret(a_ring.index(0), gl.bfloat16, [BM, BK], c_desc.layout)
        c.store(acc.to(gl.bfloat16))
        fence_async_shared()
        tma.async_store(c_desc, [t * BM, 0], c)
        tma.store_wait(0)


def has_cluster_api() -> bool:
    """Whether this Triton's Gluon builds kernels of several CTAs as `cluster_multicast_ring` does (3.8, 3.9)."""
    return "cga_layout" in getattr(gl.NVMMASharedLayout, "__dataclass_fields__", {}) and \
        hasattr(mbarrier, "allocate_mbarrier") and hasattr(tma, "async_load")


def _cluster_signature(ctas):
    """Descriptors whose tiles every CTA of the cluster holds whole (a CGA layout of broadcast bases)."""
    layout = gl.NVMMASharedLayout(128, 16, cga_layout=[[0, 0]] * (ctas > 1))
    return {"a_desc": tensordesc("fp16", [128, 64], layout), "c_desc": tensordesc("bf16", [128, 64], layout),
            "K": "i32", "T": "i32"}


KERNELS = {
    # name: (fn, signature, constexprs, capability, folder)
    "fa_borrow_ok": (fa_borrow_ok, {"x_ptr": "*fp32", "n_iter": "i32"}, {"NUM": 2, "BM": 128, "BN": 128}, 100, ""),
    "gemm_epilogue_ok": (gemm_epilogue_ok, {"x_ptr": "*fp32", "n_iter": "i32"},
                         {"STAGES": 3, "BM": 128, "BK": 64, "BN": 128, "C_DTYPE": gl.bfloat16}, 90, ""),
    "ws_ring_ok": (ws_ring_ok, {"x_ptr": "*fp32", "n_iter": "i32"}, {"STAGES": 3, "BM": 64, "BK": 64}, 100, ""),
    "fa_tutorial_borrow_ok": (fa_tutorial_borrow, {"x_ptr": "*fp32", "n_tiles": "i32", "n_iter": "i32"},
                              {"BM": 128, "BN": 128, "ALPHA_COL": 64}, 100, ""),
    # alpha borrowed one column past S's buffer: it lands in the next buffer's columns (P1)
    "fa_alpha_past_end_bad": (fa_tutorial_borrow, {"x_ptr": "*fp32", "n_tiles": "i32", "n_iter": "i32"},
                              {"BM": 128, "BN": 128, "ALPHA_COL": 127}, 100, "bugs"),
    "fa_packed_p_bad": (fa_packed_p_bad, {"x_ptr": "*fp32", "n_iter": "i32"}, {"NUM": 2, "BM": 128, "BN": 128}, 100,
                        "bugs"),
    "ring_wrap_bad": (ring_wrap_bad, {"x_ptr": "*fp32", "n_iter": "i32"}, {"STAGES": 3, "BM": 128, "BK": 64}, 90,
                      "bugs"),
    "last_slot_after_loop_ok": (last_slot_after_loop, {"x_ptr": "*fp32", "n_iter": "i32"},
                                {"STAGES": 3, "BM": 128, "BK": 64, "AT_LEAST_ONE": True}, 90, ""),
    "last_slot_after_loop_bad": (last_slot_after_loop, {"x_ptr": "*fp32", "n_iter": "i32"},
                                 {"STAGES": 3, "BM": 128, "BK": 64, "AT_LEAST_ONE": False}, 90, "bugs"),
    "last_slot_after_while_ok": (last_slot_after_while, {"x_ptr": "*fp32", "n_iter": "i32"},
                                 {"STAGES": 3, "BM": 128, "BK": 64, "GUARD": True}, 90, ""),
    # the while loop runs no step when n_iter <= 0: k stays 0 and the slot read after it is (0 - 1) % 3 = -1
    "last_slot_after_while_bad": (last_slot_after_while, {"x_ptr": "*fp32", "n_iter": "i32"},
                                  {"STAGES": 3, "BM": 128, "BK": 64, "GUARD": False}, 90, "bugs"),
    "last_slot_after_inner_loop_ok": (last_slot_after_inner_loop,
                                      {"x_ptr": "*fp32", "n_tiles": "i32", "k_steps": "i32"},
                                      {"STAGES": 3, "BM": 128, "BK": 64, "GUARD": True}, 90, ""),
    # k_steps <= 0: the first tile's epilogue reads slot (0 - 1) % 3 = -1 (needs n_tiles >= 1 as well)
    "last_slot_after_inner_loop_bad": (last_slot_after_inner_loop,
                                       {"x_ptr": "*fp32", "n_tiles": "i32", "k_steps": "i32"},
                                       {"STAGES": 3, "BM": 128, "BK": 64, "GUARD": False}, 90, "bugs"),
    # the epilogue tile in fp32 (64 KiB) no longer fits the 48 KiB ring it borrows (P1)
    "gemm_epilogue_overflow_bad": (gemm_epilogue_ok, {"x_ptr": "*fp32", "n_iter": "i32"},
                                   {"STAGES": 3, "BM": 128, "BK": 64, "BN": 128, "C_DTYPE": gl.float32}, 90, "bugs"),
}

# Kernels of several CTAs per cluster (`has_cluster_api`), apart from KERNELS (whose consumers take every kernel
# but an `_ok` one for a seeded bug): name -> (fn, signature maker, constexprs, capability, compile options).
CLUSTER_KERNELS = {
    # a race between the CTAs of a cluster, which a checker of one CTA cannot see
    "cluster_multicast_ring": (cluster_multicast_ring, lambda: _cluster_signature(2),
                               {"STAGES": 2, "BM": 128, "BK": 64}, 90, {"num_ctas": 2}),
}

# --- Contract-2 IR (what the tlx-alias lowering emits), synthesized: seed 000's FA spec and mutations ------

def _fa(**edits):
    """Seed 000's TMEM layout; edits: {leaf name: {field: value}} applied after placement."""
    synth = _synth()
    lay = synth.seed000_fa()
    for leaf in lay.leaves:
        for k, v in edits.get(leaf.name, {}).items():
            setattr(leaf, k, v)
    return lay


def _no_mod(leaf, logical, out):
    """An index rewrite that forgot the `+ (i mod K)` term."""
    synth = _synth()
    phys = synth.rewrite_ops(leaf, logical, out)
    out[-1] = out[-1].replace(f"%{leaf.id}_qso, %{leaf.id}_r", f"%{leaf.id}_qso, %{leaf.id}_o")
    return phys


def _big_smem():
    synth = _synth()
    a = synth.Leaf("a0", "a_ring", (64, 128), "f32", 3)
    c = synth.Leaf("a1", "c_tile", (128, 128), "f32", 1)
    return synth.layout(synth.Group("shared", [a, c], 1, "gemm.py:30"), "smem")


# file -> (intent, layout thunk, module_text kwargs, RUN expectation "ok"/"bad", CHECK lines)
TLX_CASES = {
    "tlx-fa-seed000.mlir": (
        "Seed 000's flash-attention TMEM spec, lowered: every property proven, memory map printed.",
        lambda: _fa(), {}, "ok",
        ["CHECK: P1 spec0: proven", "CHECK: P2 spec0: proven", "CHECK: P3 spec0: proven: 10 checks",
         "CHECK: P4 spec0: proven: 6 checks", "CHECK: P5 spec0: proven", "CHECK: P6 spec0: proven: spec0: 256 of 512 cols",
         "CHECK: -> SAFE", "CHECK: spec0: TMEM, 256 cols",
         "CHECK: p_tiles: 8x128x64xbf16 at +0, 4 x 32 cols, tlx.view group=2, {{.*}}: [0]=0..32 [1]=32..64 "
         "[2]=128..160 [3]=160..192",
         "CHECK: alpha_tiles: {{.*}} [0]=64..65 [1]=192..193"]),
    "bugs/tlx-lost-group-size.mlir": (
        "p_tiles lowered with group=1 instead of 2: logical p[2] lands past the 8 slots of the view (P1).",
        lambda: _fa(p_tiles={"group": 1}), {}, "bad",
        ["CHECK: P1 spec0: VIOLATION: p_tiles[2] spans cols [256, 288), slot 8 of 8, outside spec0 (256 cols"]),
    "bugs/tlx-distinct-overlap.mlir": (
        "alpha placed at column 32, inside P's sub-tiles: distinct siblings overlap in the same group (P4).",
        lambda: _fa(alpha_tiles={"offset": 32}), {}, "bad",
        ["CHECK: P4 spec0: VIOLATION: p_tiles[{{[01]}}] cols [{{0|32}}, {{32|64}}) ({{.*}}) overlaps alpha_tiles[0] "
         "cols [32, 33) ({{.*}}) although they are the same group; {{.*}}group declared at fa.py:41"]),
    "bugs/tlx-cross-stage.mlir": (
        "m_tiles with stride 32 instead of 128: m[1] lands in column 98, inside qk[0] of the other stage (P3).",
        lambda: _fa(m_tiles={"stride": 32}), {}, "bad",
        ["CHECK: P3 spec0: VIOLATION: qk_tiles[0] cols [0, 128) ({{.*}}) overlaps m_tiles[1] cols [98, 99) "
         "({{.*}}) although they are different stages"]),
    "bugs/tlx-rewrite-no-mod.mlir": (
        "The index rewrite of every view lost its `+ (i mod K)` term: p[1] selects p[0]'s slot (P5).",
        lambda: _fa(), {"rewrite": _no_mod}, "bad",
        ["CHECK: P5 spec0: VIOLATION: for i = {{[13]}} the IR selects slot {{[04]}} of p_tiles, the declared layout "
         "slot {{[15]}}", "CHECK: also: for i = {{[01]}} the IR selects slot {{128|256}} of alpha_tiles, the declared layout slot "
         "{{64|192}}"]),
    "bugs/tlx-index-past-num.mlir": (
        "The kernel indexes p_tiles with `iv % 5` although it has 4 buffers (P5, counterexample with the loop).",
        lambda: _fa(), {"index": {"a1": '%c5 = "arith.constant"() <{{value = 5 : i32}}> : () -> i32\n'
                                        '%{leaf}_i = "arith.remsi"(%iv, %c5) : (i32, i32) -> i32 {loc}'}}, "bad",
        ["CHECK: P5 spec0: VIOLATION: logical index i = iv@{{[0-9]+}} % 5 = 4 at {{.*}}.mlir:{{[0-9]+}} "
         "(must be in [0, 4)) with iv@{{[0-9]+}} = {{[0-9]*[49]}} (induction variable of the loop"]),
    "bugs/tlx-smem-over-limit.mlir": (
        "A 3-stage 128x128 fp32 ring sharing with a 128x256 tile: 196608 bytes fit sm_90 but not sm_120 (P6).",
        _big_smem, {"target": "cuda:120"}, "bad",
        ["CHECK: P6 spec0: VIOLATION: spec0 needs 196608 bytes, the target has 101376"]),
}

# --- Triton 3.9's lowering of one-column TMEM buffers (`python_passes/storage_alias_allocation._column_slots`):
# the spec as slots of 128 columns, each buffer a window of its slot (tlx.view width) selected by a
# ttng.tmem_subslice and reinterpreted to the buffer's own type. Written here, not by synth.py, which writes
# one slot per buffer.

def _tm(n):
    return f"#ttng.tensor_memory_encoding<blockM = 128, blockN = {n}, colStride = 1>"


_W_SLOTS = f"!ttg.memdesc<2x128x128xf32, {_tm(128)}, #ttng.tensor_memory, mutable>"
_W_SLOT = f"!ttg.memdesc<128x128xf32, {_tm(128)}, #ttng.tensor_memory, mutable>"
_W_COL = f"!ttg.memdesc<128x1xf32, {_tm(128)}, #ttng.tensor_memory, mutable, 128x128>"
_W_BUF = f"!ttg.memdesc<128x1xf32, {_tm(1)}, #ttng.tensor_memory, mutable>"
_W_BACK = f"!ttg.memdesc<128x256xi32, {_tm(256)}, #ttng.tensor_memory, mutable>"
_W_TREE = (r'{\"kind\": \"shared\", \"group_size\": 1, \"src\": \"fa.py:20\", \"children\": [\"a0\", '
           r'{\"kind\": \"distinct\", \"group_size\": 1, \"src\": \"fa.py:21\", \"children\": [\"a2\", \"a3\"]}]}')


def _window_view(var, aid, name, line, offset, width=None):
    """A view of the spec as 2 slots of 128 columns (`width`: its buffers are that many columns of a slot)."""
    w = f", width = {width} : i64" if width else ""
    return (f'    %{var} = "ttg.memdesc_reinterpret"(%backing) {{tlx.alloc = "{aid}", tlx.name = "{name}", '
            f'tlx.spec = "spec0", tlx.src = "fa.py:{line}", tlx.view = {{base = 0 : i64, group = 1 : i64, '
            f'num = 2 : i64, offset = {offset} : i64, radices = array<i64>, slot = 128 : i64, stride = 128 : i64, '
            f'strides = array<i64>{w}}}, tlx.overlap = "{_W_TREE}"}} : ({_W_BACK}) -> {_W_SLOTS} '
            f'loc("{name}"("fa.py":{line}:5))')


def _window_site(var, aid, name, line, col, whole=False):
    """Slot i of the view, its column `col` as the buffer, loaded (`whole`: the whole slot loaded instead)."""
    at, next_line = f'loc("{name}"("fa.py":{line}:9))', f'loc("fa.py":{line + 1}:9)'
    out = [f'      %{var}_slot = "ttg.memdesc_index"(%{var}, %i) : ({_W_SLOTS}, i32) -> {_W_SLOT} {at}']
    if whole:
        return out + [f'      %{var}_all = "ttng.tmem_load"(%{var}_slot) : ({_W_SLOT}) -> tensor<128x128xf32> {next_line}']
    return out + [
        f'      %{var}_col = "ttng.tmem_subslice"(%{var}_slot) {{offset = {col} : i32}} : ({_W_SLOT}) -> {_W_COL} {at}',
        f'      %{var}_buf = "ttg.memdesc_reinterpret"(%{var}_col) {{tlx.alloc = "{aid}", tlx.name = "{name}"}} : '
        f'({_W_COL}) -> {_W_BUF} {at}',
        f'      %{var}_val = "ttng.tmem_load"(%{var}_buf) : ({_W_BUF}) -> tensor<128x1xf32> {next_line}']


def window_module(alpha_off=64, l_off=65, alpha_col=64, l_col=65, whole=False, alpha_width=1):
    """qk (2 x 128 columns), alpha and l (one column each at 64 and 65 of each slot, distinct siblings) indexed
    by `iv % 2` in a loop; the edits move a declaration or a selected column, or load alpha's whole slot."""
    lines = ['"builtin.module"() ({',
             '  "tt.func"() <{function_type = (i32) -> (), sym_name = "kernel", sym_visibility = "public"}> ({',
             '  ^bb0(%n: i32):',
             f'    %backing = "ttng.tmem_alloc"() {{tlx.backing = "spec0", tlx.src = "fa.py:10"}} : () -> {_W_BACK} loc("spec"("fa.py":10:5))',
             _window_view("qk", "a0", "qk_tiles", 11, 0), _window_view("alpha", "a2", "alpha_tiles", 12, alpha_off, alpha_width),
             _window_view("l", "a3", "l_tiles", 13, l_off, 1),
             '    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32 loc("fa.py":14:5)',
             '    %c1 = "arith.constant"() <{value = 1 : i32}> : () -> i32 loc("fa.py":14:5)',
             '    %c2 = "arith.constant"() <{value = 2 : i32}> : () -> i32 loc("fa.py":14:5)',
             '    "scf.for"(%c0, %n, %c1) ({',
             '    ^bb0(%iv: i32):',
             '      %i = "arith.remsi"(%iv, %c2) : (i32, i32) -> i32 loc("i"("fa.py":15:9))',
             f'      %qk_buf = "ttg.memdesc_index"(%qk, %i) : ({_W_SLOTS}, i32) -> {_W_SLOT} loc("qk_tiles"("fa.py":16:9))',
             f'      %qk_val = "ttng.tmem_load"(%qk_buf) : ({_W_SLOT}) -> tensor<128x128xf32> loc("fa.py":17:9)',
             *_window_site("alpha", "a2", "alpha_tiles", 18, alpha_col, whole),
             *_window_site("l", "a3", "l_tiles", 20, l_col),
             '      "scf.yield"() : () -> () loc("fa.py":22:5)',
             '    }) : (i32, i32, i32) -> () loc("fa.py":14:5)',
             '    "tt.return"() : () -> () loc("fa.py":23:5)',
             '  }) : () -> () loc("fa.py":9:1)',
             '}) : () -> ()', '']
    return "\n".join(lines)



WINDOW_CASES = {
    "tlx-column-windows.mlir": (
        "Seed 000's alpha and l tiles as Triton 3.9 lowers them: 2 slots of 128 columns, each buffer a one-column "
        "window of its slot, selected by a ttng.tmem_subslice and reinterpreted back: every property proven; the "
        "map shows the buffers' own columns.", {}, "ok",
        ["CHECK: P1 spec0: proven", "CHECK: P2 spec0: proven", "CHECK: P3 spec0: proven", "CHECK: P4 spec0: proven",
         "CHECK: P5 spec0: proven", "CHECK: -> SAFE",
         "CHECK: alpha_tiles: 2x128x128xf32 at +0, 2 x 1 cols, tlx.view group=1, {{.*}}: [0]=64..65 [1]=192..193",
         "CHECK: l_tiles: 2x128x128xf32 at +0, 2 x 1 cols, tlx.view group=1, {{.*}}: [0]=65..66 [1]=193..194"]),
    "bugs/tlx-window-wrong-column.mlir": (
        "alpha's buffer selected at column 65 of its slot, where tlx.view puts it at 64: it reads l's column (P1).",
        {"alpha_col": 65}, "bad",
        ["CHECK: P1 spec0: VIOLATION: alpha_tiles spans cols [1, 2) of alpha_tiles[{{[01]}}], but a buffer of "
         "alpha_tiles has 1 cols: it reaches into the next buffer (cols [{{65|193}}, {{66|194}}) of spec0)"]),
    "bugs/tlx-window-whole-slot.mlir": (
        "A load of alpha's whole 128-column slot, where its buffer is one column of it: the rest is qk's and l's (P1).",
        {"whole": True}, "bad",
        ["CHECK: P1 spec0: VIOLATION: an op at fa.py:19 accesses a whole 128-cols slot of alpha_tiles, whose buffers "
         "are 1 cols at 64 in their slot"]),
    "bugs/tlx-window-past-slot.mlir": (
        "alpha declared 65 columns wide at column 64 of its 128-column slot: its buffer would cross into the next "
        "slot (P1: the declaration contradicts itself).", {"alpha_width": 65}, "bad",
        ["CHECK: P1 spec0: VIOLATION: a buffer of 65 cols at 64 cols into its slot does not fit the slot's 128 cols"]),
    "bugs/tlx-window-distinct-overlap.mlir": (
        "l declared at column 64, alpha's, though the tree makes them distinct siblings: P4 compares the buffers' "
        "windows, not the slots every view here shares.", {"l_off": 64, "l_col": 64}, "bad",
        ["CHECK: P4 spec0: VIOLATION: alpha_tiles[{{[01]}}] cols [{{64|192}}, {{65|193}}) ({{.*}}) overlaps "
         "l_tiles[{{[01]}}] cols [{{64|192}}, {{65|193}})"]),
}


# Triton releases that reject a kernel themselves, with their diagnostic: 3.8's memdesc_reinterpret keeps the
# exact size (no tile smaller than the ring it borrows); 3.8 and 3.9 refuse a view larger than its source.
REJECTED = {
    "fa_borrow_ok": {(3, 8): "same logical storage size"},
    "gemm_epilogue_ok": {(3, 8): "same logical storage size"},
    "gemm_epilogue_overflow_bad": {(3, 8): "same logical storage size", (3, 9): "exceeds the source view"},
    "fa_packed_p_bad": {(3, 8): "same logical storage size"},
    "fa_alpha_past_end_bad": {(3, 8): "same logical storage size", (3, 9): "exceeds the source view"},
}


def rejected_by_this_triton(name):
    """The diagnostic the installed Triton gives for kernel `name`, or None if it compiles it."""
    return REJECTED.get(name, {}).get(compat.VERSION[:2])


def write_tlx_cases():
    synth = _synth()
    root = os.path.normpath(os.path.join(HERE, ".."))
    for name, (intent, make, kwargs, expect, checks) in TLX_CASES.items():
        run = ("// RUN: %PYTHON -m tlx_alias.verify.cli %s --map | FileCheck %s" if expect == "ok" else
               "// RUN: not %PYTHON -m tlx_alias.verify.cli %s | FileCheck %s")
        head = [f"// {intent}", "// Generated by Inputs/make_inputs.py (Contract-2 IR from test/tools/synth.py).",
                run] + [f"// {c}" for c in checks]
        text = "\n".join(head) + "\n\n" + synth.module_text(make(), file=os.path.basename(name), **kwargs)
        path = os.path.join(root, name)
        with open(path, "w") as f:
            f.write(text)
        print("wrote", path)
    for name, (intent, edits, expect, checks) in WINDOW_CASES.items():
        run = ("// RUN: %PYTHON -m tlx_alias.verify.cli %s --map | FileCheck %s" if expect == "ok" else
               "// RUN: not %PYTHON -m tlx_alias.verify.cli %s | FileCheck %s")
        head = [f"// {intent}", "// Generated by Inputs/make_inputs.py (window_module).", run] + [f"// {c}" for c in checks]
        path = os.path.join(root, name)
        with open(path, "w") as f:
            f.write("\n".join(head) + "\n\n" + window_module(**edits))
        print("wrote", path)


def _synth():
    """test/tools/synth.py: the Contract-2 IR writer for the TLX cases (test tooling, not the product)."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
    import synth
    return synth


def compile_ttgir(name):
    if name in CLUSTER_KERNELS:
        fn, sig, constexprs, cap, options = CLUSTER_KERNELS[name]
        sig = sig()
    else:
        (fn, sig, constexprs, cap, _), options = KERNELS[name], None
    src = GluonASTSource(fn, sig, constexprs)
    return triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options).asm["ttgir"]


def main(argv):
    """`make_inputs.py --out DIR NAME...`: compile those kernels with the installed Triton into DIR/NAME.ttgir
    (the lit tests do this, so no dump of one Triton release is ever parsed by another);
    `make_inputs.py`: regenerate the generic-form TLX cases under ../ (version-neutral, checked in)."""
    if not argv:
        write_tlx_cases()
        return
    out = argv[argv.index("--out") + 1]
    names = [a for i, a in enumerate(argv) if a != "--out" and (i == 0 or argv[i - 1] != "--out")]
    os.makedirs(out, exist_ok=True)
    for name in names:
        # locations name make_inputs.py, not this checkout (nor the path a cached compile was made from)
        text = re.sub(r'"[^"]*/make_inputs\.py"', '"make_inputs.py"', compile_ttgir(name))
        with open(os.path.join(out, name + ".ttgir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
