"""Readers of Triton's custom-form ttgir shared by the tests (one place for each textual pattern)."""
import math
import re

from tlx_alias.kernels.demo import lowered_views

_BACKING = re.compile(r'(ttg\.local_alloc|ttng\.tmem_alloc) \{[^}]*tlx\.backing[^}]*\} : \(\) -> '
                      r'!ttg\.memdesc<((?:\d+x)+)(i8|i32)')


def backings(ttgir):
    """[(storage, units)] of every `tlx.backing` allocation: ("smem", bytes) or ("tmem", 32-bit columns)."""
    out = []
    for op, dims, _ in _BACKING.findall(ttgir):
        n = math.prod(int(d) for d in dims.rstrip("x").split("x"))
        out.append(("tmem", n // 128) if op == "ttng.tmem_alloc" else ("smem", n))
    return out


def smem_backing(ttgir):
    """Bytes of every SMEM `tlx.backing` allocation."""
    return [n for storage, n in backings(ttgir) if storage == "smem"]


def tmem_backing(ttgir):
    """32-bit columns (of 128 lanes) of every TMEM `tlx.backing` allocation."""
    return [n for storage, n in backings(ttgir) if storage == "tmem"]


def views(ttgir):
    """{name: the view's placement (offset, stride, group, num, slot, radices, strides) and type} of every
    lowered view in `ttgir`."""
    return {name: dict(vars(view), type=ty) for name, view, ty in lowered_views(ttgir)}


def proof_report(ttgir, target="cuda:90", name="kernel.ttgir"):
    """The safety proof's report on a compiled kernel's ttgir (Triton's custom form), as `tlx-verify` makes it."""
    from tlx_alias.verify import prove_module
    from tlx_alias.verify.source import load_triton
    loaded = load_triton(ttgir, name)
    with loaded.context:
        return prove_module(loaded.module, target, loaded.aliases, name)
