"""tlx-buffer-offset (seed 000, step 2): place every aliased allocation in its spec.

Precondition: tlx-size-definition has run. Walks each spec's reuse tree from offset 0 (`tlx_alias.layout`:
shared children at the parent's offset, distinct children one after another at aligned starts, a shared
group_size adding a sub-slot digit) and records on each `tlx.storage_alias_local_alloc`, in spec units:
  buffer_offset   address of buffer 0
  buffer_stride   distance between root index groups (the spec's stride)
  group_sizes     K_1..K_m on the path,  group_strides  U_1..U_m
Allocations of a spec without a tree start at 0 with their natural stride (`tlx.no_reuse_tree`). A view
addresses whole buffers, so every offset and stride a leaf uses must be a multiple of its buffer size
(TLX rejects the same layouts, with the same wording); an allocation of the spec missing from its tree is
an error. Erases `tlx.set_buffer_overlap` and `tlx.reuse_group`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tlx_alias import layout

from ._ir import ModulePass, PassContext, display_name, fail, int_attr, ops_named, set_int, set_ints, set_str
from .analysis import GROUP, OVERLAP, specs


@dataclass(frozen=True)
class BufferOffset(ModulePass):
    name = "tlx-buffer-offset"

    def apply(self, module, ctx: PassContext) -> None:
        for spec in specs(module, ctx):
            if not spec.members:
                continue
            if int_attr(spec.op, "buffer_size") is None or int_attr(spec.op, "buffer_stride") is None:
                fail(spec.op, self.name, "spec has no computed size", "run tlx-size-definition first")
            if spec.tree is None:   # no tree: every allocation at offset 0 with its natural stride
                for leaf in spec.members:
                    _record(leaf.ref, layout.Placement(0, (), ()), leaf.size)
                    set_str(leaf.ref, "tlx.no_reuse_tree", "")
                continue
            stride = int_attr(spec.op, "buffer_stride")
            placed = layout.place(spec.tree, spec.storage)
            for leaf in spec.members:
                if id(leaf) not in placed:
                    fail(leaf.ref, "set_buffer_overlap",
                         f"buffer '{display_name(leaf.ref)}' uses this spec but is missing from its reuse tree",
                         "add it to the tree passed to set_buffer_overlap (a shared group places it at offset 0)")
                where = placed[id(leaf)][1]
                _check_whole_buffers(leaf, where, stride, spec.unit, self.name)
                _record(leaf.ref, where, stride)
        _erase_tree_ops(module, self.name)


def _record(op, where, stride):
    set_int(op, "buffer_offset", where.offset)
    set_int(op, "buffer_stride", stride)
    set_ints(op, "group_sizes", where.radices)
    set_ints(op, "group_strides", where.strides)


def _check_whole_buffers(leaf, where, stride, unit, name):
    b = leaf.size
    if where.offset % leaf.align:   # Triton aligns an allocation's start so; a view starts where it is placed
        fail(leaf.ref, name,
             f"buffer '{display_name(leaf.ref)}': its layout asks for alignment to {leaf.align} {unit}, and the tree "
             f"places it at {where.offset} {unit}",
             "place it first in its group (offset 0), or give it a layout without that alignment")
    terms = [("buffer_offset", where.offset)]
    if leaf.num > math.prod(where.radices):   # the leaf reaches index group 1 and beyond: the stride matters
        terms.append(("units_between_buffer_groups", stride))
    terms += [(f"sub-tile stride of group_size={k}", u) for k, u in zip(where.radices, where.strides)]
    for what, v in terms:
        if v % b:
            fail(leaf.ref, name,
                 f"buffer '{display_name(leaf.ref)}': {what} ({v}) must be a multiple of the original buffer size "
                 f"({b}) ({unit}; a view addresses whole buffers)",
                 "reorder the tree so this buffer starts on a multiple of its size (larger buffers first in a "
                 "distinct group), or give buffers of one spec sizes that divide each other")


def _erase_tree_ops(module, name):
    for op in ops_named(module, OVERLAP):
        op.erase()
    # Erase groups outermost first: a group's users are groups that contain it.
    groups = ops_named(module, GROUP)
    while groups:
        remaining = []
        for op in groups:
            if any(True for _ in op.result.uses):
                remaining.append(op)
            else:
                op.erase()
        if len(remaining) == len(groups):
            fail(remaining[0], name, "reuse_group used by something other than a reuse tree",
                 "only pass reuse groups to set_buffer_overlap or other reuse groups")
        groups = remaining
