"""tlx-storage-alias-allocation (seed 000, step 3): one backing allocation per spec, views, index rewrite.

Precondition: tlx-buffer-offset has run. Per `tlx.storage_alias_spec`:
  SMEM: `ttg.local_alloc` of ROWS x COLS x i8 (COLS a power of two: Triton aborts on other inner dims),
        alignment 1024 so 128-byte-swizzled views stay aligned;
  TMEM: `ttng.tmem_alloc` of 128 x COLUMNS x i32.
Each `tlx.storage_alias_local_alloc` becomes `ttg.memdesc_reinterpret` of the backing allocation to
[SLOTS, *shape] (SLOTS = total // buffer size), so every physical buffer position is addressable.
Every `ttg.memdesc_index` reached from the view — directly or through scf.for / scf.if / scf.while
values and ttg.warp_specialize captures, whose types are updated — gets its index rewritten to
  offset/b + (i // (K_1..K_m)) * T/b + sum_l ((i // K_{l+1}..K_m) % K_l) * U_l/b      (b = buffer size)
with constant indices folded. The spec op is erased. Any other use of a multi-buffer view is an error.
"""

from __future__ import annotations

from tlx_alias import ttg
from tlx_alias.memdesc import TMEM, with_leading
from tlx_alias._mlir import ir

from ._ir import (PassContext, display_name, fail, int_attr, ints_attr, memdesc_of, ops_named, set_int, set_str,
                  src_of, str_attr)
from .size_definition import users

NAME = "tlx-storage-alias-allocation"
# A rank-1 layout over a 2-D [G, P] backing: dim 0 is a pipelining dimension (any size on every supported
# Triton), P a power of two (Triton 3.8 aborts and 3.9 rejects other non-power-of-two layout dimensions).
SMEM_BACKING_ENCODING = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"
SMEM_ALIGNMENT = 1024
_VIEW_KEYS = ("buffer_offset", "buffer_stride", "group_sizes", "group_strides")


def backing_type(storage: str, total: int) -> str:
    """[G, P] bytes (SMEM) or [G, 128, P] 32-bit columns (TMEM), P the largest power of two dividing total."""
    p = total & -total
    if storage == "tmem":
        return (f"!ttg.memdesc<{total // p}x128x{p}xi32, #ttng.tensor_memory_encoding<blockM = 128, "
                f"blockN = {p}, colStride = 1>, #ttng.tensor_memory, mutable>")
    return f"!ttg.memdesc<{total // p}x{p}xi8, {SMEM_BACKING_ENCODING}, #ttg.shared_memory, mutable>"


def run(module, ctx: PassContext):
    for spec in ops_named(module, "tlx.storage_alias_spec"):
        allocs = users(spec, "tlx.storage_alias_local_alloc")
        if any(u.owner.name not in ("tlx.storage_alias_local_alloc",) for u in spec.result.uses):
            other = next(u.owner for u in spec.result.uses if u.owner.name != "tlx.storage_alias_local_alloc")
            fail(other, NAME, f"'{other.name}' still uses the spec", "run tlx-buffer-offset first")
        if allocs:
            _materialize(spec, allocs, ctx)
        spec.erase()


def _materialize(spec, allocs, ctx):
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
        set_int(backing, "alignment", SMEM_ALIGNMENT, bits=32)
    for alloc in allocs:
        _replace_with_view(alloc, backing, total, ctx)


def _replace_with_view(alloc, backing, total, ctx):
    desc = memdesc_of(alloc.result, ctx.aliases)
    b = desc.buffer_units
    if not all(k in alloc.attributes for k in _VIEW_KEYS):
        fail(alloc, NAME, "allocation has no placement", "run tlx-buffer-offset first")
    offset, stride = int_attr(alloc, "buffer_offset"), int_attr(alloc, "buffer_stride")
    radices, strides = ints_attr(alloc, "group_sizes"), ints_attr(alloc, "group_strides")
    slots = total // b
    if ctx.exact_views and slots * b != total:  # tlx-size-definition pads for this: a pass-order bug
        fail(alloc, NAME, f"buffer '{display_name(alloc)}' ({b} {unit_of(desc)}) does not tile its spec's {total}",
             "run tlx-size-definition with the same exact_views option first")
    view_type = ir.Type.parse(with_leading(desc.text, slots))
    view = ir.Operation.create("ttg.memdesc_reinterpret", results=[view_type],
                               operands=[backing.result], loc=alloc.location, ip=ir.InsertionPoint(alloc))
    for key in ("tlx.alloc", "tlx.src", "tlx.name", "tlx.spec", "tlx.overlap", "tlx.overlap_src",
                "tlx.no_reuse_tree"):  # what the verifier reads
        if key in alloc.attributes:
            view.attributes[key] = alloc.attributes[key]
    k_total = 1
    for k in radices:
        k_total *= k
    set_str(view, "tlx.view", f"offset={offset},stride={stride},group={k_total},num={desc.shape[0]},slot={b},"
                              f"radices={list(radices)},strides={list(strides)}")
    alloc.result.replace_all_uses_with(view.result)
    alloc.erase()
    plan = _IndexPlan(offset // b, stride // b, list(radices), [u // b for u in strides])
    _retype_and_rewrite(view.result, plan, alloc_src=src_of(view))


def unit_of(desc) -> str:
    return "columns" if desc.space == TMEM else "bytes"


class _IndexPlan:
    """physical(i) = base + (i // K) * scale + sum over digits; see module docstring."""

    def __init__(self, base, scale, radices, strides):
        self.base, self.scale, self.radices, self.strides = base, scale, radices, strides

    @property
    def identity(self):
        return self.base == 0 and self.scale == 1 and not self.radices

    def apply(self, i: int) -> int:
        out, rest = self.base, i
        for k, u in reversed(list(zip(self.radices, self.strides))):
            out += (rest % k) * u
            rest //= k
        return out + rest * self.scale


def _retype_and_rewrite(view, plan, alloc_src):
    """Give every value that carries `view` (loop-carried, yielded, captured) the view's type, and rewrite
    the index of every `ttg.memdesc_index` of it. A carried value that also receives another descriptor is
    an error: one index rewrite cannot serve both."""
    new_type, carried, work = view.type, [], [view]
    while work:
        value = work.pop()
        for use in list(value.uses):
            owner, pos = use.owner, use.operand_number
            if owner.name == "ttg.memdesc_index" and pos == 0:
                _rewrite_index(owner, plan)
            elif owner.name in ("ttg.local_dealloc", "ttng.tmem_dealloc"):
                owner.erase()
            else:
                dests = _passes_to(owner, pos)
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


def _passes_to(owner, pos):
    """The block arguments and results a use hands the descriptor on to; None if the op consumes it."""
    name = owner.name
    if name == "scf.for" and pos >= 3:
        return [_blocks(owner, 0).arguments[pos - 2], owner.results[pos - 3]]
    if name == "scf.while":
        return [_blocks(owner, 0).arguments[pos]]
    if name == "scf.condition" and pos >= 1:
        parent = owner.parent
        return [_blocks(parent, 1).arguments[pos - 1], parent.results[pos - 1]]
    if name == "scf.yield":
        parent = owner.parent
        if parent.name == "scf.for":
            return [parent.results[pos], _blocks(parent, 0).arguments[pos + 1]]
        if parent.name == "scf.while":  # the `after` region's yield feeds the next iteration's `before` region
            return [_blocks(parent, 0).arguments[pos]]
        if parent.name in ("scf.if", "scf.execute_region", "scf.index_switch"):
            return [parent.results[pos]]
        return None
    if name in (ttg.WS, ttg.WS_PARTITIONS):
        return ttg.partition_args(owner, pos)
    return None


def _holder(value):
    """The op whose block argument or result `value` is."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        owner = owner.owner
    return getattr(owner, "operation", owner)


def _yield_of(block):
    return list(block.operations)[-1]


def _sources(value):
    """Every value that can flow into a block argument or result (the inverse of `_passes_to`)."""
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
    fail(owner, NAME,
         f"'{owner.name}' uses a whole multi-buffer allocation of a storage_alias_spec",
         "select one buffer with .index(i) before using it (aliased buffers are only addressed per index)",
         src_of(owner) or alloc_src)


def _rewrite_index(op, plan):
    if plan.identity:
        return
    index = op.operands[1]
    ip = ir.InsertionPoint(op)
    loc = op.location
    itype = index.type
    const = _constant_value(index)
    if const is not None:   # fold, but keep the user's index so the verifier can check the slot
        folded = _const(plan.apply(const), itype, ip, loc)
        set_int(folded.owner, "tlx.logical_index", const)
        op.operands[1] = folded
        return
    total_k = 1
    for k in plan.radices:
        total_k *= k
    group = _binop("arith.divsi", index, _const(total_k, itype, ip, loc), ip, loc) if total_k > 1 else index
    acc = _binop("arith.muli", group, _const(plan.scale, itype, ip, loc), ip, loc) if plan.scale != 1 else group
    rest = index
    digits = list(reversed(list(zip(plan.radices, plan.strides))))      # innermost first
    for n, (k, u) in enumerate(digits):
        digit = _binop("arith.remsi", rest, _const(k, itype, ip, loc), ip, loc)
        if u != 1:
            digit = _binop("arith.muli", digit, _const(u, itype, ip, loc), ip, loc)
        acc = _binop("arith.addi", acc, digit, ip, loc)
        if n + 1 < len(digits):
            rest = _binop("arith.divsi", rest, _const(k, itype, ip, loc), ip, loc)
    if plan.base:
        acc = _binop("arith.addi", acc, _const(plan.base, itype, ip, loc), ip, loc)
    op.operands[1] = acc


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


def _const(v, itype, ip, loc):
    op = ir.Operation.create("arith.constant", results=[itype],
                             attributes={"value": ir.IntegerAttr.get(itype, v)}, loc=loc, ip=ip)
    return _tag(op).result


def _binop(name, a, b, ip, loc):
    return _tag(ir.Operation.create(name, results=[a.type], operands=[a, b], loc=loc, ip=ip)).result
