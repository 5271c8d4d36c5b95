"""Write Contract-2 IR (generic form) for a TLX layout: the lowering's output, synthesized for tests.

`layout(tree, leaves)` places a reuse tree the way the seed's passes do (shared: children at one offset, a
group_size K over a leaf makes K consecutive buffers one logical group; distinct: children one after
another); `module_text(...)` prints the backing allocation, one `ttg.memdesc_reinterpret` view per leaf
with `tlx.view` / `tlx.alloc` / `tlx.name` / `tlx.overlap`, and one `ttg.memdesc_index` per view inside an
`scf.for`, its index rewritten by `arith` ops tagged `tlx.index_rewrite`. Mutations (a wrong stride, a
missing rewrite, an index past the end) are plain edits of the `Leaf` records or the `index` argument.

Deliberately not the lowering: its placement is simpler than `tlx_alias.layout` (no 128-byte or TMEM-column
alignment, one index digit) so that the verifier's tests get Contract-2 IR that no pass wrote, and a bug of the
passes cannot hide one of the verifier.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace

from tlx_alias._mlir import attr_text
from tlx_alias.layout import ViewLayout
from tlx_alias.memdesc import MemDesc, parse_memdesc

SMEM_VIEW_LAYOUT = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"


@dataclass
class Leaf:
    id: str                      # tlx.alloc
    name: str
    shape: tuple                 # one buffer
    dtype: str                   # MLIR element type: f32, bf16, f16, i8, f8E4M3FN
    num: int                     # logical buffers
    col_stride: int = 1          # TMEM only
    # filled by layout():
    offset: int = 0
    stride: int = 0
    group: int = 1
    slot: int = 0


@dataclass
class Group:
    kind: str                    # "shared" | "distinct"
    children: list
    group_size: int = 1
    src: str = "k.py:1"


@dataclass
class Layout:
    storage: str                 # "smem" | "tmem"
    leaves: list
    total: int                   # units of the backing allocation
    tree: dict | None = None     # tlx.overlap JSON (None: no set_buffer_overlap)
    groups: int = 1


def memdesc_of(leaf: Leaf, storage: str, slots: int | None = None) -> MemDesc:
    shape = ((slots,) if slots is not None else ()) + tuple(leaf.shape)
    return parse_memdesc(_type(shape, leaf, storage))


def _type(shape, leaf, storage):
    dims = "x".join(map(str, shape))
    if storage == "tmem":
        enc = (f"#ttng.tensor_memory_encoding<blockM = 128, blockN = {leaf.shape[-1]}, "
               f"colStride = {leaf.col_stride}>")
        return f"!ttg.memdesc<{dims}x{leaf.dtype}, {enc}, #ttng.tensor_memory, mutable>"
    return f"!ttg.memdesc<{dims}x{leaf.dtype}, {SMEM_VIEW_LAYOUT}, #ttg.shared_memory, mutable>"


def _to_json(node):
    if isinstance(node, Leaf):
        return node.id
    return {"kind": node.kind, "group_size": node.group_size, "src": node.src,
            "children": [_to_json(c) for c in node.children]}


def layout(tree, storage: str, groups: int | None = None) -> Layout:
    """Place every leaf of `tree` (a Group or a Leaf); the reference the lowering must agree with.

    groups: logical buffer groups; sets each leaf's num to groups x its group size (default: keep nums)."""
    leaves = []

    def size(node):  # units of one logical group
        if isinstance(node, Leaf):
            node.slot = memdesc_of(node, storage).size
            leaves.append(node)
            return node.slot
        sizes = [size(c) for c in node.children]
        return node.group_size * max(sizes) if node.kind == "shared" else sum(sizes)

    stride = size(tree)

    def place(node, base, k):
        if isinstance(node, Leaf):
            node.offset, node.stride, node.group = base, stride, k
            return
        for c in node.children:
            place(c, base, k * node.group_size)
            if node.kind == "distinct":
                base += size_only(c)

    def size_only(node):
        if isinstance(node, Leaf):
            return node.slot
        sizes = [size_only(c) for c in node.children]
        return node.group_size * max(sizes) if node.kind == "shared" else sum(sizes)

    place(tree, 0, 1)
    if groups is not None:
        for leaf in leaves:
            leaf.num = groups * leaf.group
    groups = max(math.ceil(leaf.num / leaf.group) for leaf in leaves)
    total = groups * stride
    if storage == "smem":  # the backing is ROWSxCOLSxi8 with COLS a power of two: round up to it
        total = _smem_shape(total)[0] * _smem_shape(total)[1]
    return Layout(storage, leaves, total, _to_json(tree) if isinstance(tree, Group) else None, groups)


def _smem_shape(total):
    cols = 1
    while cols * 2 <= min(total, 1024) and total % (cols * 2) == 0:
        cols *= 2
    return math.ceil(total / cols), cols


def rewrite_ops(leaf: Leaf, logical: str, out: list, tag: str = "{tlx.index_rewrite}") -> str:
    """Append the index rewrite of `logical` for `leaf`; returns the SSA name of the physical index."""
    n = leaf.id
    k, scale, off = leaf.group, leaf.stride // leaf.slot, leaf.offset // leaf.slot
    for name, value in (("k", k), ("s", scale), ("o", off)):
        out.append(f'%{n}_{name} = "arith.constant"() <{{value = {value} : i32}}> {tag} : () -> i32')
    out.append(f'%{n}_q = "arith.floordivsi"({logical}, %{n}_k) {tag} : (i32, i32) -> i32')
    out.append(f'%{n}_qs = "arith.muli"(%{n}_q, %{n}_s) {tag} : (i32, i32) -> i32')
    out.append(f'%{n}_qso = "arith.addi"(%{n}_qs, %{n}_o) {tag} : (i32, i32) -> i32')
    out.append(f'%{n}_r = "arith.remsi"({logical}, %{n}_k) {tag} : (i32, i32) -> i32')
    out.append(f'%{n}_phys = "arith.addi"(%{n}_qso, %{n}_r) {tag} : (i32, i32) -> i32')
    return f"%{n}_phys"


def _view_attr(leaf: Leaf) -> str:
    """The leaf's `tlx.view` dictionary as the lowering writes it (a group of K > 1 is one digit (K, slot))."""
    digits = ((leaf.group,), (leaf.slot,)) if leaf.group > 1 else ((), ())
    return attr_text(ViewLayout(leaf.offset, leaf.stride, leaf.slot, leaf.num, *digits, leaf.group).fields())


def module_text(lay: Layout, target: str = "cuda:100", index: dict | None = None, rewrite=rewrite_ops,
                file: str = "k.py", with_tree: bool = True) -> str:
    """Generic-form module: backing + views + one indexed use per view in a loop over %n.

    index: {leaf id: text of an i32 expression over %iv} for the user's (logical) index; the default is
    `%iv % num` written as `arith.remsi`. rewrite(leaf, logical, out) emits the physical index (None: none).
    """
    index = index or {}
    lines, line_no = [], [10]

    def loc(name=None):
        line_no[0] += 1
        base = f'"{file}":{line_no[0]}:5'
        return f'loc("{name}"({base}))' if name else f"loc({base})"

    body = []
    if lay.storage == "tmem":
        btype = (f"!ttg.memdesc<128x{lay.total}xi32, #ttng.tensor_memory_encoding<blockM = 128, "
                 f"blockN = {min(lay.total, 256)}, colStride = 1>, #ttng.tensor_memory, mutable>")
        body.append(f'%backing = "ttng.tmem_alloc"() {{tlx.backing = "spec0", tlx.src = "{file}:10"}} '
                    f': () -> {btype} {loc("spec")}')
    else:
        rows, cols = _smem_shape(lay.total)
        btype = f"!ttg.memdesc<{rows}x{cols}xi8, {SMEM_VIEW_LAYOUT}, #ttg.shared_memory, mutable>"
        body.append(f'%backing = "ttg.local_alloc"() {{alignment = 1024 : i32, tlx.backing = "spec0", '
                    f'tlx.src = "{file}:10"}} : () -> {btype} {loc("spec")}')
    overlap = json.dumps(lay.tree).replace('"', '\\"') if (lay.tree and with_tree) else None
    views = {}
    for leaf in lay.leaves:
        slots = max(lay.total // leaf.slot, 1)
        vtype = _type((slots,) + tuple(leaf.shape), leaf, lay.storage)
        attrs = (f'tlx.alloc = "{leaf.id}", tlx.name = "{leaf.name}", tlx.spec = "spec0", tlx.src = "{file}:{line_no[0] + 1}", '
                 f'tlx.view = {_view_attr(leaf)}' + (f', tlx.overlap = "{overlap}"' if overlap else ""))
        body.append(f'%{leaf.id} = "ttg.memdesc_reinterpret"(%backing) {{{attrs}}} : ({btype}) -> {vtype} '
                    f'{loc(leaf.name)}')
        views[leaf.id] = (vtype, _type(tuple(leaf.shape), leaf, lay.storage))
    body.append(f'%c0 = "arith.constant"() <{{value = 0 : i32}}> : () -> i32 {loc()}')
    body.append(f'%c1 = "arith.constant"() <{{value = 1 : i32}}> : () -> i32 {loc()}')
    loop = []
    for leaf in lay.leaves:
        expr = index.get(leaf.id)
        if expr is None:
            loop.append(f'%{leaf.id}_n = "arith.constant"() <{{value = {leaf.num} : i32}}> : () -> i32 {loc()}')
            loop.append(f'%{leaf.id}_i = "arith.remsi"(%iv, %{leaf.id}_n) : (i32, i32) -> i32 {loc("i")}')
            logical = f"%{leaf.id}_i"
        else:
            loop.extend(expr.format(leaf=leaf.id, loc=loc("i")).splitlines())
            logical = f"%{leaf.id}_i"
        ops = []
        phys = rewrite(leaf, logical, ops) if rewrite else logical
        loop += [f"{op} {loc()}" for op in ops]
        vtype, btype1 = views[leaf.id]
        loop.append(f'%{leaf.id}_buf = "ttg.memdesc_index"(%{leaf.id}, {phys}) : ({vtype}, i32) -> {btype1} '
                    f'{loc(leaf.name)}')
    loop.append('"scf.yield"() : () -> ()')
    body.append('"scf.for"(%c0, %n, %c1) ({')
    body.append("^bb0(%iv: i32):")
    body += ["  " + op for op in loop]
    body.append(f"}}) : (i32, i32, i32) -> () {loc('loop')}")
    body.append('"tt.return"() : () -> ()')
    lines.append('"builtin.module"() ({')
    lines.append('  "tt.func"() <{function_type = (i32) -> (), sym_name = "kernel", sym_visibility = "public"}> ({')
    lines.append("  ^bb0(%n: i32):")
    lines += ["    " + op for op in body]
    lines.append("  }) : () -> ()")
    lines.append(f'}}) {{"ttg.num-warps" = 4 : i32, ttg.target = "{target}"}} : () -> ()')
    return "\n".join(lines) + "\n"


def seed000_fa(num=2, slices=2, bm=128, bn=128) -> Layout:
    """Seed 000's flash-attention TMEM spec: shared(qk, distinct(shared(p, K=slices), alpha, l, m))."""
    qk = Leaf("a0", "qk_tiles", (bm, bn), "f32", num)
    p = Leaf("a1", "p_tiles", (bm, bn // slices), "bf16", num * slices)
    alpha = Leaf("a2", "alpha_tiles", (bm, 1), "f32", num)
    l_ = Leaf("a3", "l_tiles", (bm, 1), "f32", num)
    m = Leaf("a4", "m_tiles", (bm, 1), "f32", num)
    tree = Group("shared", [qk, Group("distinct", [Group("shared", [p], slices, "fa.py:42"), alpha, l_, m],
                                      1, "fa.py:41")], 1, "fa.py:40")
    return layout(tree, "tmem")


__all__ = ["Leaf", "Group", "Layout", "layout", "module_text", "rewrite_ops", "seed000_fa", "replace", "field"]
