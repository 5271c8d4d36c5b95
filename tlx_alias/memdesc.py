"""Parse `!ttg.memdesc<...>` types (generic form, opaque to the upstream bindings) and size them.

One job: turn the text of a memory-descriptor type into shape, element width, encoding (aliases resolved),
memory space, mutability and alloc shape, and say how many units one buffer of it occupies —
bytes for shared memory (SMEM), 32-bit columns for tensor memory (TMEM, 128 lanes per column).

    !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>
    !ttg.memdesc<64x64xf32, #shared, #smem, mutable, 2x64x64>
    !ttg.memdesc<2x128x128xf32, #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>,
                 #ttng.tensor_memory, mutable>
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

SMEM, TMEM = "smem", "tmem"
UNIT = {SMEM: "bytes", TMEM: "cols"}

_BITS = {"bf16": 16, "f16": 16, "f32": 32, "f64": 64, "tf32": 32, "index": 64}


def element_bits(elem: str) -> int | None:
    """Bit width of an MLIR element type name (`f32`, `bf16`, `i8`, `f8E4M3FN`, `f4E2M1FN`, ...)."""
    if elem in _BITS:
        return _BITS[elem]
    m = re.fullmatch(r"[iuf](\d+)(E\d+M\d+\w*)?|si(\d+)|ui(\d+)", elem)
    if m:
        return int(next(g for g in (m.group(1), m.group(3), m.group(4)) if g))
    if elem.startswith("!tt.ptr"):
        return 64
    return None


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside any <>, (), [], {} nesting or quotes."""
    out, depth, cur, quoted = [], 0, [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<([{":
            depth += 1
        elif not quoted and ch in ">)]}":
            depth -= 1
        if ch == sep and depth == 0 and not quoted:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur and "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def resolve(text: str, aliases: dict | None, depth: int = 0) -> str:
    """Replace a leading `#alias` / `!alias` by its definition (recursively); other text unchanged."""
    text = text.strip()
    if aliases and depth < 8 and re.fullmatch(r"[#!][\w.$-]+", text):
        for key in (text, text[1:]):
            if key in aliases:
                return resolve(str(aliases[key]), aliases, depth + 1)
    return text


class MalformedType(ValueError):
    """A memdesc type whose text its dialect would reject (e.g. a TMEM `colStride` that is not a number), or
    whose element type has no width this module knows: possible only in generic-form text, where
    `!ttg.memdesc<...>` is opaque to the parser. `element`: the element type text in the second case."""

    def __init__(self, message: str, element: str | None = None):
        super().__init__(message)
        self.element = element


class UnsizedType(MalformedType):
    """A valid memdesc type this module cannot size: a padded shared layout (`#ttg.padded_shared`), whose
    buffers are not a fixed number of bytes apart (Triton pads inside and between them); a linear shared layout
    with a zero (broadcast) offset basis (Triton allocates the layout's whole offset range, more than the
    elements: sized as its elements, half of what Triton addresses, found by a helper's sweep of the layouts)."""

    FIX = "give the buffer a swizzled or NVMMA shared layout"


# TMEM encoding parameters the sizes are computed from: positive integers (`twoCTAs`: true or false)
_TMEM_INTS = ("blockM", "blockN", "colStride", "CTASplitM", "CTASplitN")


def _check_tmem_params(params: dict, text: str) -> None:
    for key in _TMEM_INTS:
        if key in params and not re.fullmatch(r"[1-9]\d*", params[key]):
            raise MalformedType(f"{key} = {params[key]} is not a positive integer in the type {text}")
    if params.get("twoCTAs", "false") not in ("true", "false"):
        raise MalformedType(f"twoCTAs = {params['twoCTAs']} is neither true nor false in the type {text}")


def _params(encoding: str) -> dict:
    """`#ttng.tensor_memory_encoding<blockM = 128, colStride = 1>` -> {'blockM': '128', 'colStride': '1'}."""
    m = re.search(r"<(.*)>\s*$", encoding, re.S)
    if not m:
        return {}
    body = m.group(1).strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    out = {}
    for part in split_top(body):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


@dataclass(frozen=True)
class MemDesc:
    shape: tuple
    elem: str
    bits: int
    encoding: str          # resolved text of the layout attribute
    space: str             # SMEM, TMEM, or the memory-space text when neither
    mutable: bool
    alloc_shape: tuple | None
    text: str              # the type as written

    @functools.cached_property
    def tmem_params(self) -> dict:
        return _params(self.encoding) if self.space == TMEM else {}

    @property
    def resolved(self) -> bool:
        """False when the encoding is an alias reference nobody defined (TMEM size then unknown)."""
        return not re.fullmatch(r"#[\w.$-]+", self.encoding)

    @functools.cached_property
    def element_padding(self) -> int:
        """2 for an fp4-padded layout (SMEM or TMEM: Triton gives each packed byte of 4-bit pairs two, one for
        each element: 2x the bytes or columns, measured on 3.9 for every shape a helper's sweep tried), else 1."""
        return 2 if re.search(r"\bfp4Padded\s*=\s*true", self.encoding) else 1

    def units(self, shape=None) -> int:
        """Bytes (SMEM) or 32-bit columns (TMEM) occupied by a tensor of `shape` (default: the whole type)."""
        return self._units(shape) * self.element_padding

    def _units(self, shape=None) -> int:
        shape = tuple(self.shape if shape is None else shape)
        if self.space != TMEM:
            return math.prod(shape) * self.bits // 8 if shape else self.bits // 8
        if "tensor_memory_scales_encoding" in self.encoding:
            # Triton: scales are packed and replicated: ceil(m/32) * ceil(k/4) columns per 2-D tile
            lead = math.prod(shape[:-2]) if len(shape) > 2 else 1
            m, k = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[-1])
            return lead * math.ceil(m / 32) * math.ceil(k / 4)
        if len(shape) == 1:
            shape = (1,) + shape
        return math.prod(shape[:-2]) * self._tmem_tile_columns(shape[-2], shape[-1])

    def _tmem_tile_columns(self, m: int, n: int) -> int:
        """Columns per CTA of one m x n TMEM tile, as Triton allocates and steps it (getTmemAllocSizes).

        Checked against Triton 3.6-3.9 (test_memdesc_tmem.py compiles kernels and reads the step between
        buffers from the PTX). Per CTA (`CTASplitM/N` on 3.6/3.7, `CGALayout` bases on 3.8/3.9) a block is
        blockN x bits x colStride / 32 columns (16-bit packs two per column at colStride 1); 128-row
        blocks sit side by side; two 64-row blocks share their columns; a two-CTA 64-row block is stored
        as 128 rows of half the columns.
        """
        p = self.tmem_params
        split_m, split_n = _cta_split(p)
        mc, nc = max(1, m // split_m), max(1, n // split_n)
        block_m = int(p.get("blockM", 128))
        block_n = min(int(p.get("blockN", nc)), nc)
        per_block = block_n * self.bits * int(p.get("colStride", 1)) / 32
        blocks = math.ceil(mc / block_m) * math.ceil(nc / block_n)
        if block_m == 64 and p.get("twoCTAs") == "true" and split_m == 2:
            return max(1, math.ceil(per_block / 2) * blocks)
        if block_m == 64:
            return max(1, math.ceil(blocks / 2) * math.ceil(per_block))
        return max(1, blocks * math.ceil(per_block))

    @functools.cached_property
    def size(self) -> int:
        return self.units()

    @functools.cached_property
    def buffer_units(self) -> int:
        """Units of one buffer along dim 0 (what `memdesc_index` steps by)."""
        return self.units(self.shape[1:]) if len(self.shape) > 1 else self.units((1,))

    def cols_per_element(self) -> float:
        """TMEM columns advanced per element along the last dimension (for `ttng.tmem_subslice`)."""
        m = self.shape[-2] if len(self.shape) >= 2 else 1
        n = self.shape[-1]
        return self._tmem_tile_columns(m, n) * self.element_padding / n

    @property
    def alignment(self) -> int:
        """Bytes the layout asks its allocation's start to be aligned to (a linear shared layout's `alignment`)."""
        m = re.search(r"alignment\s*=\s*(\d+)", self.encoding) if "shared_linear" in self.encoding else None
        return int(m.group(1)) if m else 1

    def short(self) -> str:
        return "x".join(map(str, self.shape)) + "x" + self.elem


def _linear_offsets(encoding: str) -> str:
    """The `offset = [[...], ...]` bases of a `#ttg.shared_linear<{...}>` encoding, as text."""
    m = re.search(r"offset\s*=\s*(\[\s*(?:\[[^\]]*\]\s*,?\s*)*\])", encoding)
    return m.group(1) if m else ""


def _cta_split(params: dict) -> tuple:
    """(split along M, split along N) of a TMEM encoding: `CTASplitM/N` (3.6/3.7) or `CGALayout` bases (3.8+),
    each basis [1, 0] / [0, 1] doubling the split along M / N."""
    split_m, split_n = int(params.get("CTASplitM", 1)), int(params.get("CTASplitN", 1))
    for a, b in re.findall(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]", params.get("CGALayout", "")):
        split_m, split_n = split_m * (2 if int(a) else 1), split_n * (2 if int(b) else 1)
    return split_m, split_n


def parse_memdesc(type_text: str, aliases: dict | None = None) -> MemDesc | None:
    """Parse a memdesc type (`!ttg.memdesc<...>` or the opaque data `memdesc<...>`); None if it is not one.
    MalformedType when its element type has no known width, or the TMEM encoding's sizes are not numbers."""
    text = str(type_text).strip()
    m = re.fullmatch(r"!?(?:ttg\.)?memdesc<(.*)>", text, re.S)
    if not m:
        return None
    parts = split_top(m.group(1))
    dims = parts[0].split("x")
    shape = []
    while dims and dims[0].isdigit():
        shape.append(int(dims.pop(0)))
    elem = "x".join(dims)
    bits = element_bits(elem)
    if bits is None:
        raise MalformedType(f"the element type {elem!r} of the type {text} has no width tlx-alias knows", elem)
    encoding = resolve(parts[1], aliases) if len(parts) > 1 else ""
    space_text = resolve(parts[2], aliases) if len(parts) > 2 else ""
    if "tensor_memory" in space_text or space_text in ("#tmem",):
        space = TMEM
    elif "shared_memory" in space_text or space_text in ("#smem",):
        space = SMEM
    else:
        space = space_text
    rest = parts[3:]
    mutable = "mutable" in rest
    alloc_shape = None
    for r in rest:
        if re.fullmatch(r"\d+(x\d+)*", r):
            alloc_shape = tuple(int(d) for d in r.split("x"))
    if "padded_shared" in encoding:
        raise UnsizedType(f"the type {text} has a padded shared layout, whose bytes tlx-alias does not size")
    if "shared_linear" in encoding and re.search(r"\[\s*0(\s*,\s*0)*\s*\]", _linear_offsets(encoding)):
        raise UnsizedType(f"the type {text} has a linear shared layout with a zero (broadcast) offset basis, "
                          "whose bytes (the layout's whole offset range) tlx-alias does not size")
    md = MemDesc(tuple(shape), elem, bits, encoding, space, mutable, alloc_shape, text)
    if space == TMEM and md.resolved:
        _check_tmem_params(md.tmem_params, text)
    return md


_ALIAS_DEF = re.compile(r"([#!][\w.$-]+)\s*=\s*(.+?)\s*")
_LOC_ALIAS = re.compile(r"#loc\d*")


def parse_aliases(text: str) -> dict:
    """Alias definitions (`#name = ...` / `!name = ...` at line start) of an MLIR file, `#loc` ones excluded.

    Read from the top up to the first other line (blank and `//` lines skipped): an attribute or type alias
    is defined before its first use, so none can follow the module; only location aliases may (Triton's
    printouts put theirs at the end), and those are not wanted. Reading on would cost a scan of the whole
    printout on every compile (`bridge.to_upstream`)."""
    out = {}
    for line in text.splitlines():
        m = _ALIAS_DEF.fullmatch(line)
        if m is None:
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            break
        name, body = m.group(1), m.group(2)
        if not _LOC_ALIAS.fullmatch(name) and not body.startswith("loc("):
            out[name] = body
    return out


def with_leading(type_text: str, n: int) -> str:
    """The same memdesc type with dim 0 set to n (alias references and attributes kept as written)."""
    return re.sub(r"^(\s*!?(?:ttg\.)?memdesc<)\d+", lambda m: f"{m.group(1)}{n}", str(type_text), count=1)
