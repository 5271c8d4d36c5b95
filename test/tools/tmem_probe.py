"""Where Triton puts buffer 1 of a multi-buffered TMEM allocation: read from the PTX it emits.

`step(dtype, shape, layout, num_ctas)` compiles `allocate_tensor_memory(dtype, [2, *shape], layout)` for
sm_100 on the CPU, once loading buffer 0 and once buffer 1, evaluates the straight-line PTX up to the
first `tcgen05.ld/st` for thread 0 (with `tcgen05.alloc`'s base read as 0) and returns the difference of
the two addresses (row << 16 | column), with the ttgir of the second compile. Test tooling: it is how the
project's TMEM column count (tlx_alias.memdesc) is checked against Triton itself, not a second model.
"""
from __future__ import annotations

import re

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia import blackwell as bw

from tlx_alias import _triton as compat


@gluon.jit
def _probe(out_ptr, DT: gl.constexpr, M: gl.constexpr, N: gl.constexpr, LAYOUT: gl.constexpr, IDX: gl.constexpr,
           REG: gl.constexpr, STORE_BACK: gl.constexpr):
    t = bw.allocate_tensor_memory(DT, [2, M, N], LAYOUT)
    v = t.index(IDX).load(REG)
    if STORE_BACK:  # a reduction of a 2-CTA layout is not supported: keep the load alive by storing it back
        t.index(IDX).store(v)
    else:
        gl.store(out_ptr, gl.sum(gl.sum(v.to(gl.float32), axis=1), axis=0))


def _compile(dtype, shape, layout, idx, num_ctas):
    m, n = shape
    if compat.VERSION >= (3, 8, 0):
        ty = bw.tensor_memory_descriptor_type(dtype, [m, n], layout, [m, n])
        reg = type(ty).__dict__["get_reg_layout"].fn(ty, 4)
    else:
        bases = [[1, 0]] * (layout.cta_split_num[0] // 2 if layout.cta_split_num else 0)
        reg = bw.get_tmem_reg_layout.fn(dtype, [m, n], layout, 4, "32x32b", bases)
    src = GluonASTSource(_probe, {"out_ptr": "*fp32"}, {"DT": dtype, "M": m, "N": n, "LAYOUT": layout, "IDX": idx,
                                                      "REG": reg, "STORE_BACK": num_ctas > 1})
    return triton.compile(src, target=GPUTarget("cuda", 100, 32), options={"num_warps": 4, "num_ctas": num_ctas})


def step(dtype, shape, layout, num_ctas=1):
    """(row, column) distance from buffer 0 to buffer 1, and the ttgir (with the allocation's type)."""
    a0, a1 = (_compile(dtype, shape, layout, idx, num_ctas) for idx in (0, 1))
    d = _first_address(a1.asm["ptx"]) - _first_address(a0.asm["ptx"])
    return (d >> 16, d & 0xFFFF), a1.asm["ttgir"]


_LINE = re.compile(r"^\s*(@!?%\w+\s+)?([a-z][\w.:]*)\s+(.*?);\s*$")
_ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "shl": lambda a, b: a << b,
          "shr": lambda a, b: a >> b, "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
          "min": min, "max": max}


def _first_address(ptx: str) -> int:
    """The TMEM address of the first tcgen05.ld/st for thread 0 of CTA 0, the allocation's base read as 0."""
    regs = {}

    def num(tok):
        tok = tok.strip()
        if tok.startswith("%"):
            return regs.get(tok)
        try:
            return int(tok, 0)
        except ValueError:
            return None

    for raw in ptx.splitlines():
        m = _LINE.match(raw.split("//")[0])
        if not m:
            continue
        op, args = m.group(2), m.group(3)
        if op.startswith(("tcgen05.ld", "tcgen05.st")):
            am = re.search(r"\[\s*(%\w+)\s*(?:\+\s*(-?\w+))?\s*\]", args)
            base = regs.get(am.group(1)) if am else None
            if base is None:
                raise ValueError(f"cannot follow the TMEM address in: {raw.strip()}")
            return (base + (int(am.group(2), 0) if am.group(2) else 0)) & 0xFFFFFFFF
        parts = [p.strip() for p in re.split(r",(?![^{]*})", args)]
        dst, srcs = parts[0], parts[1:]
        kind = op.split(".")[0]
        vals = [num(x) for x in srcs]
        if kind == "mov":
            v = 0 if srcs and (srcs[0].startswith(("%tid", "%laneid", "%warpid", "%ctaid", "%cluster"))
                               or re.fullmatch(r"[A-Za-z_]\w*", srcs[0])) else vals[0]
        elif kind == "ld" and ".shared" in op:
            v = 0                               # the base tcgen05.alloc wrote to shared memory
        elif kind == "shfl":
            dst, v = dst.split("|")[0], vals[0]
        elif kind == "cvt":
            v = vals[0]
        elif kind == "mad" and None not in vals:
            v = vals[0] * vals[1] + vals[2]
        elif kind == "bfe" and None not in vals:
            v = (vals[0] >> vals[1]) & ((1 << vals[2]) - 1)
        elif kind in _ARITH and len(vals) >= 2 and None not in vals[:2]:
            v = _ARITH[kind](vals[0], vals[1])
        else:
            v = None
        if dst.startswith("%"):
            regs[dst] = None if v is None else v & 0xFFFFFFFF
    raise ValueError("no tcgen05.ld/st in the PTX")
