"""Main job of the README: compile seed 000's attention TMEM tree for sm_100a on the CPU and print its layout.

    python -m tlx_alias.kernels.demo [--slices S] [--buffers NUM] [--block-n BN]

QK (fp32) shares tensor memory with P (bf16, S sub-tiles per QK buffer), alpha, l and m:
    shared(qk, distinct(shared[group_size=S](p), alpha, l, m))
The plugin computes the sizes, offsets and strides, lowers to one `ttng.tmem_alloc`, and prints here the
columns each view occupies per buffer index.
"""

from __future__ import annotations

import argparse
import re
import time

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from tlx_alias import _triton as compat
from tlx_alias._mlir import attr_value
from tlx_alias.layout import ViewLayout

import tlx_alias.language as tlx


@gluon.jit
def fa_tmem_demo_kernel(out_ptr, BM: gl.constexpr, BN: gl.constexpr, S: gl.constexpr, NUM: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    qk = tlx.local_alloc((BM, BN), gl.float32, NUM, tlx.storage_kind.tmem, reuse=spec)
    p = tlx.local_alloc((BM, BN // S), gl.bfloat16, NUM * S, tlx.storage_kind.tmem, reuse=spec)
    alpha = tlx.local_alloc((BM, 1), gl.float32, NUM, tlx.storage_kind.tmem, reuse=spec)
    l_i = tlx.local_alloc((BM, 1), gl.float32, NUM, tlx.storage_kind.tmem, reuse=spec)
    m_i = tlx.local_alloc((BM, 1), gl.float32, NUM, tlx.storage_kind.tmem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(
        qk,
        tlx.reuse_group(tlx.reuse_group(p, group_size=S), alpha, l_i, m_i,
                        group_type=tlx.reuse_group_type.distinct),
        group_type=tlx.reuse_group_type.shared))
    # Touch every buffer so none is dead code (Gluon removes unused allocations).
    qk_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], qk.type.layout, 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [BM, BN // S], p.type.layout, 4)
    one_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, 1], alpha.type.layout, 4)
    rows: gl.constexpr = gl.SliceLayout(1, qk_reg)
    acc = gl.zeros([BM], gl.float32, rows)
    for i in range(NUM):
        acc += gl.sum(qk.index(i).load(qk_reg), axis=1)
        acc += gl.convert_layout(gl.sum(alpha.index(i).load(one_reg) + l_i.index(i).load(one_reg)
                                        + m_i.index(i).load(one_reg), axis=1), rows)
    for j in range(NUM * S):
        acc += gl.convert_layout(gl.sum(p.index(j).load(p_reg).to(gl.float32), axis=1), rows)
    gl.store(out_ptr + gl.arange(0, BM, layout=rows), acc)


_VIEW = re.compile(r'ttg\.memdesc_reinterpret .*?\btlx\.view = (\{[^{}]*\}).*? -> (!ttg\.memdesc<[^>]*>)')
_NAMES = re.compile(r'\b(tlx\.name|tlx\.alloc) = "([^"]*)"')


def lowered_views(ttgir: str):
    """(name, ViewLayout, view type) for every view the lowering created, in program order (its `tlx.view`
    dictionary read by the MLIR parser)."""
    out = []
    for line in ttgir.splitlines():
        m = _VIEW.search(line)
        if m is not None:
            names = dict(_NAMES.findall(line))
            out.append((names.get("tlx.name") or names.get("tlx.alloc"), ViewLayout.from_fields(attr_value(m.group(1))),
                        m.group(2)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slices", type=int, default=2, help="P sub-tiles per QK buffer (group_size)")
    ap.add_argument("--buffers", type=int, default=2, help="QK buffers (NUM)")
    ap.add_argument("--block-n", type=int, default=128)
    args = ap.parse_args(argv)
    cfg = {"BM": 128, "BN": args.block_n, "S": args.slices, "NUM": args.buffers}
    sig = {"out_ptr": "*fp32", **{k: "constexpr" for k in cfg}}
    t0 = time.perf_counter()
    k = triton.compile(GluonASTSource(fa_tmem_demo_kernel, sig, cfg), target=GPUTarget("cuda", 100, 32))
    dt = time.perf_counter() - t0
    print(f"fa_tmem_demo_kernel {cfg} compiled for sm_100a in {dt:.2f} s")
    print(f"tensor memory: {k.metadata.tmem_size} columns allocated (of 512); shared memory: {k.metadata.shared} bytes\n")
    views = lowered_views(k.asm["ttgir"])
    print(f"{'view':8} {'type':44} {'offset':>6} {'stride':>6} {'cols':>4}  columns per buffer index")
    for name, view, ty in views:
        cols = view.buffer[1]
        spans = ", ".join(f"[{i}] {view.address(i)}-{view.address(i) + cols - 1}" for i in range(view.num))
        print(f"{name:8} {ty[len('!ttg.memdesc<'):].split(',')[0]:44} {view.offset:>6} {view.stride:>6} {cols:>4}  {spans}")


if __name__ == "__main__":
    main()
