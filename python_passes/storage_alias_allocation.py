"""tlx-storage-alias-allocation (seed 000, step 3): one backing allocation per spec, views, index rewrite.

Precondition: tlx-buffer-offset has run. Per `tlx.storage_alias_spec`:
  SMEM: `ttg.local_alloc` of ROWS x COLS x i8 (COLS a power of two: Triton aborts on other inner dims),
        alignment 1024 so 128-byte-swizzled views stay aligned;
  TMEM: `ttng.tmem_alloc` of 128 x COLUMNS x i32.
Each `tlx.storage_alias_local_alloc` becomes `ttg.memdesc_reinterpret` of the backing allocation to
[SLOTS, *shape] (SLOTS = total // buffer size), so every physical buffer position is addressable. With
option `row_windows` (Triton 3.9, whose shared-memory analyses give a runtime index one exact footprint per
slot of the view: a view over the whole spec made Membar and the proxy-fence pass about twice as slow as on
separate allocations) an SMEM view starts instead at the backing row holding its first buffer and ends after
the row holding its last, where those rows are whole buffers: a `ttg.memdesc_subslice` of rows (`base` in
`tlx.view`), or from row 0 the backing itself reinterpreted to fewer slots (a subslice there would only add
one more footprint for Triton to compute). 3.6-3.8 verify a subslice only on power-of-two shapes. With the
same option a TMEM view of one-column buffers (32-bit elements) whose buffers lie in slots of W columns (W the
largest power of two that divides the spec and every stride and holds the buffer) is [total/W, M, W], not [total, M, 1]
(`tlx.view` slot W, width 1): its index selects the slot, a `ttng.tmem_subslice` at the buffer's column (3.9's
`offset`) and a reinterpret to the buffer's own type (tagged with the view's `tlx.alloc`) select the buffer;
seed 000's alpha, l and m: 2 slots instead of 256, each one more footprint for Triton 3.9's TMEM analyses.
Every `ttg.memdesc_index` reached from the view — directly or through scf.for / scf.if / scf.while
values and ttg.warp_specialize captures, whose types are updated — gets its index rewritten to
  offset/b + (i // (K_1..K_m)) * T/b + sum_l ((i // K_{l+1}..K_m) % K_l) * U_l/b      (b = buffer size)
with constant indices folded. The spec op is erased. Any other use of a multi-buffer view is an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from tlx_alias import layout, targets, ttg
from tlx_alias.memdesc import TMEM, with_leading
from tlx_alias._mlir import ir, terminator, to_attr

from ._ir import (ModulePass, PassContext, display_name, fail, int_attr, ints_attr, memdesc_of, set_int, set_str,
                  src_of, str_attr)
from .analysis import ALLOC, specs

NAME = "tlx-storage-alias-allocation"
# A rank-1 layout over a 2-D [G, P] backing: dim 0 is a pipelining dimension (any size on every supported
# Triton), P a power of two (Triton 3.8 aborts and 3.9 rejects other non-power-of-two layout dimensions).
SMEM_BACKING_ENCODING = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"
_VIEW_KEYS = ("buffer_offset", "buffer_stride", "group_sizes", "group_strides")


def backing_rows(total: int) -> tuple:
    """(G, P): P the largest power of two dividing total."""
    p = total & -total
    return total // p, p


def backing_type(storage: str, total: int) -> str:
    """[G, P] bytes (SMEM) or [G, 128, P] 32-bit columns (TMEM), P the largest power of two dividing total."""
    _, p = backing_rows(total)
    if storage == "tmem":
        return (f"!ttg.memdesc<{total // p}x128x{p}xi32, #ttng.tensor_memory_encoding<blockM = 128, "
                f"blockN = {p}, colStride = 1>, #ttng.tensor_memory, mutable>")
    return f"!ttg.memdesc<{total // p}x{p}xi8, {SMEM_BACKING_ENCODING}, #ttg.shared_memory, mutable>"


@dataclass(frozen=True)
class StorageAliasAllocation(ModulePass):
    name = NAME
    exact_views: bool = False      # Triton 3.8: every view must cover its whole backing
    row_windows: bool = False      # Triton 3.9: SMEM views start at their first buffer's row (see above)

    def apply(self, module, ctx: PassContext) -> None:
        for spec in specs(module, ctx):
            other = next((u.owner for u in spec.op.result.uses if u.owner.name != ALLOC), None)
            if other is not None:
                fail(other, NAME, f"'{other.name}' still uses the spec", "run tlx-buffer-offset first")
            dead = [leaf.ref for leaf in spec.members if "tlx.dead" in leaf.ref.attributes]
            live = [leaf.ref for leaf in spec.members if "tlx.dead" not in leaf.ref.attributes]
            if live:
                _materialize(spec.op, live, ctx, self.exact_views, self.row_windows)
            for op in dead:   # kept its place in the layout; nothing uses it
                op.erase()
            spec.op.erase()


def _materialize(spec, allocs, ctx, exact_views, row_windows):
    storage = str_attr(spec, "storage")
    total = int_attr(spec, "buffer_size")
    if total is None:
        fail(spec, NAME, "spec has no computed size", "run tlx-size-definition first")
    backing = ir.Operation.create(
        "ttng.tmem_alloc" if storage == "tmem" else "ttg.local_alloc",
        results=[ir.Type.parse(backing_type(storage, total))], loc=spec.location, ip=ir.InsertionPoint(spec))
    set_str(backing, "tlx.backing", str_attr(spec, "tlx.spec") or "spec")
    if str_attr(spec, "tlx.src"):
        set_str(backing, "tlx.src", str_attr(spec, "tlx.src"))
    if storage == "smem":
        set_int(backing, "alignment", targets.SMEM_ALLOC_ALIGNMENT, bits=32)
    for alloc in allocs:
        _index_before_select(alloc.result)
    for alloc in allocs:
        _replace_with_view(alloc, backing, total, ctx, exact_views, row_windows)


def _index_before_select(value):
    """`select(c, A, B)[k]` as `select(c, A[k], B[k])`, where A or B is a buffer of a spec and the select's result
    is only indexed: Triton's canonicalizer makes the first of the second (a helper returning `a.index(1)` or
    `b.index(0)` from the two branches of an `if` becomes a select of the whole allocations indexed by
    `select(c, 1, 0)`), and each view has a slot rewrite of its own, so the index must reach each allocation."""
    for use in list(value.uses):
        sel = use.owner
        if sel.name != "arith.select" or use.operand_number == 0:
            continue
        users = [u.owner for u in sel.results[0].uses]
        if not users or any(u.name != "ttg.memdesc_index" for u in users) or \
                any(u.operand_number != 0 for u in sel.results[0].uses):
            continue
        cond, on_true, on_false = list(sel.operands)
        for index_op in users:
            ip, loc = ir.InsertionPoint(index_op), index_op.location
            buffer_type, k = index_op.results[0].type, index_op.operands[1]
            picks = [ir.Operation.create("ttg.memdesc_index", results=[buffer_type], operands=[src, k],
                                         attributes={a.name: a.attr for a in index_op.attributes}, loc=loc, ip=ip)
                     for src in (on_true, on_false)]
            pick = ir.Operation.create("arith.select", results=[buffer_type],
                                       operands=[cond, picks[0].result, picks[1].result], loc=loc, ip=ip)
            index_op.results[0].replace_all_uses_with(pick.result)
            index_op.erase()
        sel.erase()


def _replace_with_view(alloc, backing, total, ctx, exact_views, row_windows):
    desc = memdesc_of(alloc.result, ctx.aliases)
    b = desc.buffer_units
    if not all(k in alloc.attributes for k in _VIEW_KEYS):
        fail(alloc, NAME, "allocation has no placement", "run tlx-buffer-offset first")
    offset, stride = int_attr(alloc, "buffer_offset"), int_attr(alloc, "buffer_stride")
    radices, strides = ints_attr(alloc, "group_sizes"), ints_attr(alloc, "group_strides")
    slots = total // b
    if exact_views and slots * b != total:  # tlx-size-definition pads for this: a pass-order bug
        fail(alloc, NAME, f"buffer '{display_name(alloc)}' ({b} {unit_of(desc)}) does not tile its spec's {total}",
             "run tlx-size-definition with the same exact_views option first")
    where = layout.ViewLayout(offset, stride, b, desc.shape[0], tuple(radices), tuple(strides))
    source, view_text = backing.result, None
    if row_windows and desc.space != TMEM:
        source, where, slots = _window(backing, where, total, slots, alloc)
    elif row_windows and (windowed := _column_slots(where, total, desc)) is not None:
        where, slots, view_text = windowed
    view_type = ir.Type.parse(view_text or with_leading(desc.text, slots))
    view = ir.Operation.create("ttg.memdesc_reinterpret", results=[view_type],
                               operands=[source], loc=alloc.location, ip=ir.InsertionPoint(alloc))
    for key in ("tlx.alloc", "tlx.src", "tlx.name", "tlx.spec", "tlx.no_reuse_tree"):  # what the verifier reads
        if key in alloc.attributes:
            view.attributes[key] = alloc.attributes[key]
    spec = alloc.operands[0].owner
    for key in ("tlx.overlap", "tlx.overlap_src"):  # the reuse tree, for the verifier's P4
        if key in spec.attributes:
            view.attributes[key] = spec.attributes[key]
    view.attributes["tlx.view"] = to_attr(where.fields())
    alloc.result.replace_all_uses_with(view.result)
    alloc.erase()
    tags = {key: view.attributes[key] for key in ("tlx.alloc", "tlx.name") if key in view.attributes}
    _retype_and_rewrite(view.result, where, alloc_src=src_of(view), tags=tags)


def _window(backing, where, total, slots, alloc):
    """(source, layout, slots) of an SMEM view: the backing rows from the one holding the view's first buffer
    to the one holding its last, when they start at a buffer boundary and are whole buffers (from row 0: the
    backing itself, with the window's slots); otherwise the whole backing with every slot, as before."""
    rows, p = backing_rows(total)
    first, end = where.span()
    r0, r1 = first // p, -(-end // p)
    base, units = r0 * p, (r1 - r0) * p
    if base % where.slot or units % where.slot:
        return backing.result, where, slots
    if r0 == 0:  # a prefix (or all of it): the backing itself, to fewer slots (a subslice would add a footprint)
        return backing.result, where, units // where.slot
    t = backing.result.type
    window = ir.Operation.create(
        "ttg.memdesc_subslice", results=[ir.Type.parse(with_leading(str(t), r1 - r0)[:-1] + f", {rows}x{p}>")],
        operands=[backing.result], attributes={"offsets": ir.DenseI32ArrayAttr.get([r0, 0])},
        loc=alloc.location, ip=ir.InsertionPoint(alloc))
    return window.result, replace(where, base=base), units // where.slot


def _column_slots(where, total, desc):
    """(layout, slots, view type) of a TMEM view whose one-buffer slots would be many more than the spec's slots
    of W columns (W the largest power of two that divides the spec and every stride and holds the buffer at the
    offset's remainder; a TMEM encoding's blockN is a power of two): slots of W columns with the buffer a window
    of `width` columns in each (`tlx.view`'s width; `_select_window` emits the subslice). Triton 3.9's TMEM
    analyses compute a footprint per slot a runtime index may select (seed 000's one-column buffers: 256 slots
    of one column -> 2 of 128). Buffers of 32-bit elements one column each, [num, M, N], only; None for the
    others (one slot per buffer)."""
    b = where.slot
    if len(desc.shape) != 3 or desc.bits != 32 or desc.cols_per_element() != 1 or desc.shape[2] != b:
        return None
    w = math.gcd(total, *(u for u in where.strides), *((where.stride,) if where.num > where.group else ()))
    w &= -w                      # a TMEM encoding's blockN is a power of two
    if w <= b or (where.offset - where.base) % w + b > w or w != desc.units((desc.shape[1], w)):
        return None
    block_m = desc.tmem_params.get("blockM", desc.shape[1])
    text = (f"!ttg.memdesc<{total // w}x{desc.shape[1]}x{w}x{desc.elem}, #ttng.tensor_memory_encoding<"
            f"blockM = {block_m}, blockN = {w}, colStride = 1>, #ttng.tensor_memory, mutable>")
    return replace(where, slot=w, width=b), total // w, text


def _select_window(op, where, tags):
    """After the `memdesc_index` `op` of a view whose buffers are windows of its slots: the buffer's columns of
    the slot (`ttng.tmem_subslice`), reinterpreted to the buffer's own type (carrying the view's `tags`: the
    verifier and P7 read it as the view's buffer) for every user of the buffer."""
    buffer = op.results[0]
    buffer_type, users = buffer.type, list(buffer.uses)
    m, (c, n), w = memdesc_of(buffer).shape[0], where.buffer, where.slot
    slot_text = re.sub(r"memdesc<\d+x", "memdesc<", str(op.operands[0].type), count=1)   # [M, W]
    column_text = slot_text.replace(f"<{m}x{w}x", f"<{m}x{n}x", 1)[:-1] + f", {m}x{w}>"     # [M, n] of [M, W]
    buffer.set_type(ir.Type.parse(slot_text))
    ip, loc = ir.InsertionPoint(op), op.location
    sub = ir.Operation.create("ttng.tmem_subslice", results=[ir.Type.parse(column_text)], operands=[buffer],
                              attributes={"offset": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), c)},
                              loc=loc, ip=ip)
    own = ir.Operation.create("ttg.memdesc_reinterpret", results=[buffer_type], operands=[sub.result],
                              attributes=dict(tags), loc=loc, ip=ip)
    op.move_before(sub)
    for use in users:
        use.owner.operands[use.operand_number] = own.result


def unit_of(desc) -> str:
    return "columns" if desc.space == TMEM else "bytes"


def _retype_and_rewrite(view, where, alloc_src, tags):
    """Give every value that carries `view` (loop-carried, yielded, captured) the view's type, and rewrite
    the index of every `ttg.memdesc_index` of it. A carried value that also receives another descriptor is
    an error: one index rewrite cannot serve both."""
    new_type, carried, work = view.type, [], [view]
    while work:
        value = work.pop()
        for use in list(value.uses):
            owner, pos = use.owner, use.operand_number
            if owner.name == "ttg.memdesc_index" and pos == 0:
                _rewrite_index(owner, where)
                if where.width:
                    _select_window(owner, where, tags)
            elif owner.name in ("ttg.local_dealloc", "ttng.tmem_dealloc"):
                owner.erase()
            else:
                dests = ttg.passes_to(owner, pos)
                if dests is None:
                    _unsupported(owner, alloc_src)
                for t in dests:
                    if t.type != new_type:
                        t.set_type(new_type)
                        carried.append(t)
                        work.append(t)
    for value in carried:
        for source in _sources(value):
            if source.type != new_type:
                holder = _holder(value)
                fail(holder, NAME, f"a buffer of a storage_alias_spec (allocated at {alloc_src}) and another "
                                   f"descriptor flow into the same value of this '{holder.name}'",
                     "carry only the aliased buffer through the loop or branch, or select a buffer with "
                     ".index(i) before it", src_of(holder) or alloc_src)


def _blocks(op, region):
    return op.regions[region].blocks[0]


def _holder(value):
    """The op whose block argument or result `value` is."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        owner = owner.owner
    return getattr(owner, "operation", owner)


def _yield_of(block):
    return terminator(block)


def _sources(value):
    """Every value that can flow into a block argument or result (the inverse of `ttg.passes_to`)."""
    op = _holder(value)
    name = op.name
    if isinstance(value.owner, ir.Block):  # a block argument
        k = value.arg_number
        region = next(i for i, r in enumerate(op.regions) if r.blocks[0] == value.owner)
        if name == "scf.for":
            return [op.operands[3 + k - 1], _yield_of(_blocks(op, 0)).operands[k - 1]]
        if name == "scf.while" and region == 0:
            return [op.operands[k], _yield_of(_blocks(op, 1)).operands[k]]
        if name == "scf.while":
            return [_yield_of(_blocks(op, 0)).operands[k + 1]]
        if name == ttg.WS_PARTITIONS:
            return [ttg.captures(op)[k]]
        return []
    k = value.result_number
    if name == "scf.for":
        return [op.operands[3 + k], _yield_of(_blocks(op, 0)).operands[k]]
    if name == "scf.while":
        return [_yield_of(_blocks(op, 0)).operands[k + 1]]
    return [_yield_of(r.blocks[0]).operands[k] for r in op.regions if r.blocks]


def _unsupported(owner, alloc_src):
    if owner.name in ("cf.cond_br", "cf.br"):   # Triton 3.6 / 3.7 leave a helper's if/else returns as branches
        fail(owner, NAME,
             f"'{owner.name}' passes a whole multi-buffer allocation of a storage_alias_spec between blocks: a "
             "@gluon.jit helper returning buffers from the branches of an `if` reaches the lowering as unstructured "
             "control flow on this Triton",
             "pick the buffer in the kernel itself (`if c: d = a.index(1)` / `else: d = b.index(0)`), or return "
             "the index from the helper; Triton 3.8 and later fold the helper's branches into a select the lowering "
             "follows", src_of(owner) or alloc_src)
    if owner.name == "tt.call":   # a helper Triton did not inline: noinline=True, or one with a runtime
        fail(owner, NAME,          # `return` called inside a loop (a graph of blocks cannot go into the loop)
             "a call Triton did not inline takes a whole multi-buffer allocation of a storage_alias_spec (a "
             "@gluon.jit(noinline=True) helper, or a helper with a runtime `return` called inside a loop)",
             "pass the helper one buffer, `.index(i)`, or make the helper's early `return` an `if` around its body",
             src_of(owner) or alloc_src)
    fail(owner, NAME,
         f"'{owner.name}' uses a whole multi-buffer allocation of a storage_alias_spec",
         "select one buffer with .index(i) before using it (aliased buffers are only addressed per index)",
         src_of(owner) or alloc_src)


def _rewrite_index(op, where):
    """Replace the user's buffer index by the view slot `where.slot_of` gives (constants folded, the user's
    index kept as `tlx.logical_index` so the verifier can check the slot); `d * i + c` where the slots of
    the view's buffers are that progression (`ViewLayout.affine`: no division or modulo in the loop)."""
    index = op.operands[1]
    const = _constant_value(index)
    affine = where.affine() if const is None else None
    if affine == (1, 0):
        return               # buffer i is slot i
    ops = _IndexOps(index.type, ir.InsertionPoint(op), op.location)
    if affine is not None:
        slot = ops.add(ops.mul(index, affine[0]), affine[1])
    else:
        slot = where.slot_of(const if const is not None else index, ops)
    if isinstance(slot, int):
        slot = ops.materialize(slot)
        set_int(slot.owner, "tlx.logical_index", const)
    op.operands[1] = slot


class _IndexOps:
    """`layout.ViewLayout.slot_of` arithmetic as `arith` ops tagged `tlx.index_rewrite`, folding constants
    (Python ints until an op needs them): x * 1, x + 0 and x // 1 emit nothing."""

    def __init__(self, itype, ip, loc):
        self.itype, self.ip, self.loc = itype, ip, loc

    def const(self, v):
        return v

    def add(self, a, b):
        return a + b if _both_int(a, b) else (a if b == 0 else self._op("arith.addi", a, b))

    def mul(self, a, b):
        return a * b if _both_int(a, b) else (a if b == 1 else self._op("arith.muli", a, b))

    def div(self, a, b):
        return a // b if _both_int(a, b) else (a if b == 1 else self._op("arith.divsi", a, b))

    def rem(self, a, b):
        return a % b if _both_int(a, b) else self._op("arith.remsi", a, b)

    def materialize(self, v):
        if not isinstance(v, int):
            return v
        op = ir.Operation.create("arith.constant", results=[self.itype],
                                 attributes={"value": ir.IntegerAttr.get(self.itype, v)}, loc=self.loc, ip=self.ip)
        return _tag(op).result

    def _op(self, name, a, b):
        a, b = self.materialize(a), self.materialize(b)
        return _tag(ir.Operation.create(name, results=[a.type], operands=[a, b], loc=self.loc, ip=self.ip)).result


def _both_int(a, b):
    return isinstance(a, int) and isinstance(b, int)


def _constant_value(value):
    owner = value.owner
    if isinstance(owner, ir.Block) or not hasattr(owner, "name") or owner.name != "arith.constant":
        return None
    try:
        return ir.IntegerAttr(owner.attributes["value"]).value
    except (KeyError, ValueError, TypeError):
        return None


def _tag(op):
    set_str(op, "tlx.index_rewrite", "")
    return op
