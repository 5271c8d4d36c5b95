"""Triton memory descriptor types (`!ttg.memdesc<...>`) as seen through the upstream bindings.

The upstream bindings do not know Triton's dialects, so a memdesc is an opaque type whose data is the
text between the angle brackets, with `#alias` references left verbatim. This module parses that text
into a `MemDesc` and prints it back; `aliases` (name -> definition, from the bridge or the input file)
resolves encodings when a size rule needs them (TMEM column stride).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_BITS = {"i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
         "f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8, "f8E4M3B11FNUZ": 8, "f4E2M1FN": 4}

SMEM_SPACE = "#smem"
TMEM_SPACE = "#ttng.tensor_memory"


def _split_top(text: str) -> list[str]:
    """Split on commas that are not nested in <>, {}, [] or ()."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<{[(":
            depth += 1
        elif ch in ">}])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur).strip())
    return parts


@dataclass(frozen=True)
class MemDesc:
    shape: tuple[int, ...]
    element: str
    encoding: str
    space: str
    mutable: bool = False
    alloc_shape: tuple[int, ...] | None = None

    @property
    def bits(self) -> int:
        if self.element not in _BITS:
            raise ValueError(f"unsupported element type {self.element}")
        return _BITS[self.element]

    @property
    def is_tmem(self) -> bool:
        return "tensor_memory" in self.space

    def with_shape(self, shape) -> "MemDesc":
        return replace(self, shape=tuple(shape), alloc_shape=None)

    def text(self) -> str:
        dims = "x".join(str(d) for d in self.shape)
        parts = [f"{dims}x{self.element}", self.encoding, self.space]
        if self.mutable:
            parts.append("mutable")
        if self.alloc_shape is not None:
            parts.append("x".join(str(d) for d in self.alloc_shape))
        return "!ttg.memdesc<" + ", ".join(parts) + ">"


def parse(type_text: str) -> MemDesc | None:
    """Parse `!ttg.memdesc<...>` text; None for any other type."""
    m = re.fullmatch(r"\s*!ttg\.memdesc<(.*)>\s*", type_text, re.S)
    if not m:
        return None
    parts = _split_top(m.group(1))
    dims = parts[0].split("x")
    shape = tuple(int(d) for d in dims[:-1])
    desc = dict(shape=shape, element=dims[-1], encoding=parts[1], space=parts[2])
    for extra in parts[3:]:
        if extra == "mutable":
            desc["mutable"] = True
        elif re.fullmatch(r"\d+(x\d+)*", extra):
            desc["alloc_shape"] = tuple(int(d) for d in extra.split("x"))
    return MemDesc(**desc)


def resolve(attr_text: str, aliases: dict[str, str]) -> str:
    """Follow `#name` alias references to the attribute's definition text."""
    seen = set()
    while attr_text.startswith("#") and attr_text in aliases and attr_text not in seen:
        seen.add(attr_text)
        attr_text = aliases[attr_text]
    return attr_text


def _int_param(text: str, name: str, default: int) -> int:
    m = re.search(rf"\b{name}\s*=\s*(\d+)", text)
    return int(m.group(1)) if m else default


def buffer_size(desc: MemDesc, aliases: dict[str, str]) -> int:
    """Size of ONE buffer (index along dim 0): bytes for SMEM, 32-bit columns for TMEM.

    TMEM rule (measured on triton 3.6): columns = last dim * bitwidth / 32 * colStride, whatever
    the row count (64 or 128 lanes); packed 16-bit data (colStride 1) puts two elements per column.
    """
    per = desc.shape[1:]
    if desc.is_tmem:
        enc = resolve(desc.encoding, aliases)
        col_stride = _int_param(enc, "colStride", 1)
        n = per[-1] if per else 1
        cols = n * desc.bits * col_stride
        return max(1, -(-cols // 32))
    elems = 1
    for d in per:
        elems *= d
    return elems * desc.bits // 8


def tmem_rows(desc: MemDesc) -> int:
    return desc.shape[-2] if len(desc.shape) >= 3 else 128
