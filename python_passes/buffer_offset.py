"""tlx-buffer-offset (seed 000, step 2): place every aliased allocation in its spec.

Precondition: tlx-size-definition has run. Walks each spec's reuse tree from offset 0 (shared children
at the parent's offset, distinct children one after another, group_size adding a sub-slot digit; see
reuse_tree.py) and records on each `tlx.storage_alias_local_alloc`, in spec units:
  buffer_offset   address of buffer 0
  buffer_stride   distance between root index groups (the spec's stride)
  group_sizes     K_1..K_m on the path,  group_strides  U_1..U_m
Allocations of a spec without a tree start at 0 with their natural stride. Every offset and stride must be
a multiple of the allocation's own buffer size (the lowering addresses whole buffers); otherwise it is an
error that says how to reorder. Erases `tlx.set_buffer_overlap` and `tlx.reuse_group`.
"""

from __future__ import annotations

from . import reuse_tree as rt
from ._ir import PassContext, fail, int_attr, memdesc_of, ops_named, set_int, set_ints, set_str, str_attr
from .size_definition import leaf_for, tree_of, users

NAME = "tlx-buffer-offset"


def run(module, ctx: PassContext):
    for spec in ops_named(module, "tlx.storage_alias_spec"):
        allocs = users(spec, "tlx.storage_alias_local_alloc")
        if not allocs:
            continue
        if int_attr(spec, "buffer_size") is None:
            fail(spec, NAME, "spec has no computed size", "run tlx-size-definition first")
        unit = str_attr(spec, "unit")
        root = tree_of(spec, ctx)
        if root is None:   # no tree: every allocation at offset 0 with its natural stride
            for op in allocs:
                b = memdesc_of(op.result, ctx.aliases).buffer_units
                _record(op, 0, b, (), ())
                set_str(op, "tlx.no_reuse_tree", "")
            continue
        stride = int_attr(spec, "buffer_stride")
        placed = rt.place(root)
        placed_ops = set()
        for leaf, where in placed.values():
            _check_multiple(leaf, where, stride, unit)
            _record(leaf.op, where.offset, stride, where.radices, where.strides)
            placed_ops.add(str_attr(leaf.op, "tlx.alloc") or str(leaf.op.location))
        for op in allocs:
            if (str_attr(op, "tlx.alloc") or str(op.location)) not in placed_ops:
                fail(op, "set_buffer_overlap",
                     f"buffer '{rt._name(op)}' uses this spec but is missing from its reuse tree",
                     "add it to the tree passed to set_buffer_overlap (a shared group places it at offset 0)")
    _erase_tree_ops(module)


def _record(op, offset, stride, radices, strides):
    set_int(op, "buffer_offset", offset)
    set_int(op, "buffer_stride", stride)
    set_ints(op, "group_sizes", radices)
    set_ints(op, "group_strides", strides)


def _check_multiple(leaf, where, stride, unit):
    b = leaf.size
    per_group = 1
    for k in where.radices:
        per_group *= k
    terms = [("offset", where.offset)]
    if leaf.num > per_group:        # the leaf reaches index group 1 and beyond: the stride matters
        terms.append(("stride between index groups", stride))
    terms += [(f"sub-tile stride of group_size={k}", u) for k, u in zip(where.radices, where.strides)]
    bad = [(what, v) for what, v in terms if v % b]
    if bad:
        what, v = bad[0]
        fail(leaf.op, NAME,
             f"buffer '{rt._name(leaf.op)}' needs its {what} ({v} {unit}) to be a multiple of its "
             f"buffer size ({b} {unit})",
             "put larger buffers first in distinct groups, or pad the spec with buffer_size_bytes so every "
             "offset is a multiple of each buffer's size")


def _erase_tree_ops(module):
    for op in ops_named(module, "tlx.set_buffer_overlap"):
        op.erase()
    # Erase groups outermost first: a group's users are groups that contain it.
    groups = ops_named(module, "tlx.reuse_group")
    while groups:
        remaining = []
        for op in groups:
            if any(True for _ in op.result.uses):
                remaining.append(op)
            else:
                op.erase()
        if len(remaining) == len(groups):
            fail(remaining[0], NAME, "reuse_group used by something other than a reuse tree",
                 "only pass reuse groups to set_buffer_overlap or other reuse groups")
        groups = remaining
