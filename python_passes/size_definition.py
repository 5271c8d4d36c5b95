"""tlx-size-definition (seed 000, step 1): compute or validate each storage_alias_spec's size.

Precondition: tlx ops from tlx-import (or written by hand). For each `tlx.storage_alias_spec`, with the
sizes of `tlx_alias.layout` (TLX's: `shared` = K * max, `distinct` = children one after another, each
start aligned; the stride between index groups T aligned to 128 bytes / the widest TMEM leaf):
  with a reuse tree: total = index groups * T (index groups: the most any leaf needs);
  without: total = max over its allocations of num * buffer size (all start at offset 0).
An explicit `buffer_size_bytes` must be at least the total, and only enlarges the backing (the stride
stays T, as in TLX). Units: bytes (SMEM); 32-bit columns (TMEM; an explicit size is bytes of 128 lanes x 4,
rounded up to whole columns).
Option `exact_views` (Triton 3.8, whose reinterpret keeps the size): the total is padded to a multiple of
every member's buffer size, with a warning. Sets on the spec: `buffer_size`, `buffer_stride`,
`buffer_groups` (i64) and `unit`. Errors: explicit size too small (naming the group that overflows),
a buffer count that does not split into its groups, TMEM over 512 columns, SMEM over the target's limit.
A spec with no member left is a warning; so is a `group_size` on a `distinct` group (it has no effect).
For the under-use hint (`tlx_alias.underuse`), records on the PassContext what the spec would measure
without each live buffer that overlaps another (`ctx.separations`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tlx_alias import layout, targets
from tlx_alias.underuse import Separation

from ._ir import ModulePass, PassContext, display_name, fail, int_attr, set_int, set_str, src_of
from .analysis import specs


@dataclass(frozen=True)
class SizeDefinition(ModulePass):
    name = "tlx-size-definition"
    target: str | None = None      # "cuda:90" ... (the SMEM limit)
    exact_views: bool = False

    def apply(self, module, ctx: PassContext) -> None:
        for spec in specs(module, ctx):
            if not spec.members:
                ctx.warn(spec.op, f"[{self.name}] storage_alias_spec has no allocations; it reserves nothing")
                continue
            groups, stride, total = self._natural(spec, ctx)
            total = self._explicit(spec, groups, stride, total)
            if self.exact_views:
                total = self._tile_every_view(spec, total, ctx)
            self._check_capacity(spec, total)
            ctx.separations += self._separations(spec, total)
            set_int(spec.op, "buffer_size", total)
            set_int(spec.op, "buffer_groups", groups)
            set_int(spec.op, "buffer_stride", stride or 0)
            set_str(spec.op, "unit", spec.unit)

    def _natural(self, spec, ctx):
        """(index groups, stride T or None, total) from the tree, or from the members without one."""
        if spec.tree is None:
            return 1, None, max(leaf.num * leaf.size for leaf in spec.members)
        _warn_distinct_group_size(spec.tree, ctx, self.name)
        try:
            groups = layout.index_groups(spec.tree)
        except ValueError as exc:
            leaf, k = exc.args
            fail(leaf.ref, "reuse_group", f"buffer '{display_name(leaf.ref)}' has {leaf.num} buffers, which cannot "
                                          f"be split into groups of {k}",
                 f"make its buffer count a multiple of the product of the group_size values above it ({k})")
        return groups, layout.stride(spec.tree, spec.storage), layout.total(spec.tree, spec.storage)

    def _separations(self, spec, total) -> list:
        """Per live buffer that overlaps another: the spec's size once that buffer has its own allocation
        (the tree without it, or the other members without a tree; an explicit size and Triton 3.8's
        padding as for the spec itself)."""
        if spec.tree is not None:
            sharing = layout.overlapping(spec.tree, spec.storage)
        else:   # no tree: every member starts at 0
            sharing = spec.members if len(spec.members) > 1 else []
        out = []
        for leaf in sharing:
            if "tlx.dead" in leaf.ref.attributes:
                continue    # Gluon removed it: nothing to give bytes to
            if spec.tree is not None:
                rest_tree = layout.without(spec.tree, leaf)
                rest = [other for other, _ in layout.leaves(rest_tree)]
                natural = layout.total(rest_tree, spec.storage)
            else:
                rest = [other for other in spec.members if other is not leaf]
                natural = max(other.num * other.size for other in rest)
            without = max(natural, self._explicit_units(spec) or 0)
            if self.exact_views:
                without = layout.align_up(without, math.lcm(*(other.size for other in rest)))
            out.append(Separation(src_of(spec.op), spec.storage, display_name(leaf.ref), src_of(leaf.ref),
                                  leaf.num, leaf.size, total, without))
        return out

    @staticmethod
    def _explicit_units(spec):
        """The explicit buffer_size_bytes in spec units, or None: TMEM bytes rounded up to whole columns (an
        explicit size is a least size: 40000 bytes made 78 columns, 39936 bytes)."""
        explicit = int_attr(spec.op, "buffer_size_bytes")
        if explicit is None:
            return None
        return -(-explicit // (targets.TMEM_BYTES_PER_COLUMN if spec.storage == "tmem" else 1))

    def _explicit(self, spec, groups, stride, total):
        explicit = int_attr(spec.op, "buffer_size_bytes")
        if explicit is None:
            return total
        if explicit <= 0:
            fail(spec.op, "storage_alias_spec", f"buffer_size_bytes must be positive, got {explicit}",
                 "pass a positive compile-time size or leave it out")
        per_unit = targets.TMEM_BYTES_PER_COLUMN if spec.storage == "tmem" else 1
        given = self._explicit_units(spec)
        if explicit < total * per_unit:   # in bytes: 32700 bytes are 64 columns rounded up, and too few
            if spec.tree is not None:
                _too_small(spec, given // groups, explicit, total * per_unit)
            fail(spec.op, "storage_alias_spec",
                 f"buffer_size_bytes={explicit} is too small: the allocations need {total} {spec.unit}"
                 + (f" ({total * per_unit} bytes)" if per_unit > 1 else ""),
                 "raise buffer_size_bytes or leave it out to let the compiler size the spec")
        return given

    def _tile_every_view(self, spec, total, ctx):
        tile = math.lcm(*(leaf.size for leaf in spec.members))
        padded = layout.align_up(total, tile)
        if padded != total:
            ctx.warn(spec.op, f"[{self.name}] padded from {total} to {padded} {spec.unit} so that every buffer size "
                              "divides it: Triton 3.8 can only reinterpret a whole allocation (3.9 needs no padding)")
        return padded

    def _check_capacity(self, spec, total):
        if spec.storage == "tmem" and total > targets.TMEM_COLUMNS:
            fail(spec.op, "storage_alias_spec",
                 f"tensor memory over capacity: this spec needs {total} columns, the SM has {targets.TMEM_COLUMNS}",
                 "use fewer buffers, smaller tiles, or share more of them in the reuse tree")
        limit = targets.smem_limit(targets.capability(self.target))
        if spec.storage == "smem" and total > limit:
            fail(spec.op, "storage_alias_spec",
                 f"shared memory over capacity: this spec needs {total} bytes, the target allows {limit}",
                 "use fewer stages or smaller tiles, or share more buffers in the reuse tree")


def _too_small(spec, available, explicit, need_bytes):
    """The explicit size leaves `available` units per index group: name the group that does not fit."""
    hit = layout.first_overflow(spec.tree, spec.storage, available)
    if isinstance(hit, layout.Group) and hit.kind == "distinct" and hit.ref is not None:
        fail(hit.ref, "reuse_group",
             f"not enough space for distinct allocations: need {layout.size(hit, spec.storage)} {spec.unit}, "
             f"have {available} {spec.unit} per buffer: buffer_size_bytes {explicit} is too small, requires at least "
             f"{need_bytes} bytes", "raise buffer_size_bytes, or share (not distinct) some of these buffers")
    fail(spec.op, "storage_alias_spec",
         f"buffer_size_bytes {explicit} is too small for the reuse tree, requires at least {need_bytes} bytes",
         "raise buffer_size_bytes or leave it out to let the compiler size the spec")


def _warn_distinct_group_size(node, ctx, name):
    if isinstance(node, layout.Leaf):
        return
    if node.kind == "distinct" and node.group_size > 1 and node.ref is not None:
        ctx.warn(node.ref, f"[{name}] group_size={node.group_size} on a distinct group has no effect (as in TLX): "
                           "its children are laid out once per buffer index; put the group_size on a shared group")
    for child in node.children:
        _warn_distinct_group_size(child, ctx, name)
