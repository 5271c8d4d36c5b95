"""Regenerate the `.ttgir` inputs of the tlx-verify lit tests (CPU only, ~1 s per kernel).

Hand-aliased Gluon kernels — no TLX annotations, memory shared with `_reinterpret` exactly as the
upstream Gluon tutorials do it — compiled for sm_90a / sm_100a; `compiled.asm["ttgir"]` is the custom-form
text Triton's cache and TRITON_KERNEL_DUMP hold. The `*_bad` kernels carry one deliberate aliasing bug each.

    python test/lit/verify/Inputs/make_inputs.py      # rewrites Inputs/*.ttgir and bugs/Inputs/*.ttgir
"""
import os
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                 get_tmem_reg_layout)

HERE = os.path.dirname(os.path.abspath(__file__))


# --- Blackwell: S (fp32) borrowed as P (bf16, col_stride 2) and alpha, per buffer (tutorial style) ---------
@gluon.jit
def fa_borrow_ok(x_ptr, n_iter, NUM: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr):
    s_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    p_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=2)
    a_layout: gl.constexpr = TensorMemoryLayout((BM, 1), col_stride=1)
    s_tmem = allocate_tensor_memory(gl.float32, [NUM, BM, BN], s_layout)
    s_reg: gl.constexpr = get_tmem_reg_layout(gl.float32, [BM, BN], s_layout, 4)
    p_reg: gl.constexpr = get_tmem_reg_layout(gl.bfloat16, [BM, BN], p_layout, 4)
    a_reg: gl.constexpr = get_tmem_reg_layout(gl.float32, [BM, 1], a_layout, 4)
    acc = gl.zeros([BM, BN], gl.float32, s_reg)
    for k in range(n_iter):
        s = s_tmem.index(k % NUM)
        s.store(acc)
        v = s.load(s_reg)
        p = s._reinterpret(gl.bfloat16, [BM, BN], p_layout)
        p.store(v.to(gl.bfloat16))
        alpha = s.slice(BN - 1, 1)._reinterpret(gl.float32, [BM, 1], a_layout)
        alpha.store(gl.zeros([BM, 1], gl.float32, a_reg))
        acc += p.load(p_reg).to(gl.float32)
        acc = acc * gl.convert_layout(alpha.load(a_reg), s_reg)
    offs = gl.arange(0, BN, layout=gl.SliceLayout(0, s_reg))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


# --- Blackwell bug: P reinterpreted over the whole S allocation with packed bf16 (col_stride 1): P[i] is 64
# columns, so P[1] lands inside S[0] — cross-index overlap (P3). The dtype change that silently breaks it.
@gluon.jit
def fa_packed_p_bad(x_ptr, n_iter, NUM: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr):
    s_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    s_tmem = allocate_tensor_memory(gl.float32, [NUM, BM, BN], s_layout)
    p_tmem = s_tmem._reinterpret(gl.bfloat16, [NUM, BM, BN], s_layout)
    s_reg: gl.constexpr = get_tmem_reg_layout(gl.float32, [BM, BN], s_layout, 4)
    p_reg: gl.constexpr = get_tmem_reg_layout(gl.bfloat16, [BM, BN], s_layout, 4)
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
    c_smem = a_ring._reinterpret(C_DTYPE, [BM, BN], c_layout)
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


KERNELS = {
    # name: (fn, signature, constexprs, capability, folder)
    "fa_borrow_ok": (fa_borrow_ok, {"x_ptr": "*fp32", "n_iter": "i32"}, {"NUM": 2, "BM": 128, "BN": 128}, 100, ""),
    "gemm_epilogue_ok": (gemm_epilogue_ok, {"x_ptr": "*fp32", "n_iter": "i32"},
                         {"STAGES": 3, "BM": 128, "BK": 64, "BN": 128, "C_DTYPE": gl.bfloat16}, 90, ""),
    "ws_ring_ok": (ws_ring_ok, {"x_ptr": "*fp32", "n_iter": "i32"}, {"STAGES": 3, "BM": 64, "BK": 64}, 100, ""),
    "fa_packed_p_bad": (fa_packed_p_bad, {"x_ptr": "*fp32", "n_iter": "i32"}, {"NUM": 2, "BM": 128, "BN": 128}, 100,
                        "bugs"),
    "ring_wrap_bad": (ring_wrap_bad, {"x_ptr": "*fp32", "n_iter": "i32"}, {"STAGES": 3, "BM": 128, "BK": 64}, 90,
                      "bugs"),
    # the epilogue tile in fp32 (64 KiB) no longer fits the 48 KiB ring it borrows (P1)
    "gemm_epilogue_overflow_bad": (gemm_epilogue_ok, {"x_ptr": "*fp32", "n_iter": "i32"},
                                   {"STAGES": 3, "BM": 128, "BK": 64, "BN": 128, "C_DTYPE": gl.float32}, 90, "bugs"),
}


def compile_ttgir(name):
    fn, sig, constexprs, cap, _ = KERNELS[name]
    src = GluonASTSource(fn, sig, constexprs)
    return triton.compile(src, target=GPUTarget("cuda", cap, 32)).asm["ttgir"]


def main(names):
    for name in names or KERNELS:
        folder = os.path.join(HERE, "..", KERNELS[name][4], "Inputs")
        text = compile_ttgir(name).replace(HERE + os.sep, "")  # keep the dumps free of this checkout's path
        path = os.path.normpath(os.path.join(folder, name + ".ttgir"))
        with open(path, "w") as f:
            f.write(text)
        print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1:])
