"""The analysis the sizing and placement passes share: one `SpecInfo` per `tlx.storage_alias_spec`.

Built once per pipeline run (cached on the PassContext) from the tlx ops of seed 000: the spec, its
`tlx.storage_alias_local_alloc` members in program order, and its reuse tree as `tlx_alias.layout` nodes
(from `tlx.set_buffer_overlap` and the `tlx.reuse_group` ops under it). Checks what the tree structure
itself can get wrong: storage of a member, a leaf of another spec, a leaf twice, an empty group,
`group_size < 1`, two trees for one spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cmp_to_key

from tlx_alias import layout
from tlx_alias.memdesc import TMEM

from ._ir import PassContext, display_name, fail, int_attr, memdesc_of, ops_named, src_of, str_attr

SPEC, ALLOC, GROUP, OVERLAP = ("tlx.storage_alias_spec", "tlx.storage_alias_local_alloc", "tlx.reuse_group",
                               "tlx.set_buffer_overlap")


@dataclass
class SpecInfo:
    op: object
    storage: str                  # "smem" | "tmem"
    members: list                 # layout.Leaf per member allocation, program order (ref = the op)
    tree: object                  # layout.Group root, or None without set_buffer_overlap

    @property
    def unit(self) -> str:
        return "columns" if self.storage == "tmem" else "bytes"


def specs(module, ctx: PassContext) -> list:
    """SpecInfo of every spec in the module, computed once per pipeline run."""
    key = id(module)
    if key not in ctx.analyses:
        ctx.analyses[key] = [_analyze(op, ctx) for op in ops_named(module, SPEC)]
    return ctx.analyses[key]


def tmem_allocation_columns(module, aliases=None) -> list:
    """Columns of every `ttng.tmem_alloc` in the (lowered) module, by Triton's rule: what the under-use hint
    counts TMEM in use from, since Triton's `tmem_size` is rounded up to a power of two."""
    return [memdesc_of(op.results[0], aliases).size for op in ops_named(module, "ttng.tmem_alloc")]


def users(spec_op, name):
    """Users of the spec named `name`, in program order (MLIR use lists are newest-first)."""
    found = [u.owner for u in spec_op.result.uses if u.owner.name == name]
    return sorted(found, key=cmp_to_key(_program_order))


def _program_order(a, b):
    a, b = a.operation, b.operation
    if a.block != b.block:
        return 0
    return -1 if a.is_before_in_block(b) else (1 if b.is_before_in_block(a) else 0)


def _analyze(spec_op, ctx) -> SpecInfo:
    storage = str_attr(spec_op, "storage")
    if storage not in ("smem", "tmem"):
        fail(spec_op, "storage_alias_spec", f"storage kind '{storage}' cannot be aliased",
             "use tlx.storage_kind.smem or tlx.storage_kind.tmem (smemCluster is not supported)")
    members = [_leaf(op, storage, ctx) for op in users(spec_op, ALLOC)]
    overlaps = users(spec_op, OVERLAP)
    if len(overlaps) > 1:
        fail(overlaps[1], "set_buffer_overlap",
             "storage_alias_spec already has a set_buffer_overlap defined; each spec can only have one "
             "overlap definition", "call set_buffer_overlap once per spec (choose the tree with constexpr if needed)")
    tree = None
    if overlaps:
        by_op = {leaf.ref.operation: leaf for leaf in members}
        tree = _node(overlaps[0].operands[1], spec_op, by_op, set())
        if isinstance(tree, layout.Leaf):
            tree = layout.Group(None, "shared", 1, [tree])
    return SpecInfo(spec_op, storage, members, tree)


def _leaf(op, storage, ctx) -> layout.Leaf:
    desc = memdesc_of(op.result, ctx.aliases)
    have = "tmem" if desc.space == TMEM else "smem"
    if have != storage:
        fail(op, "local_alloc", f"{have} allocation uses a {storage} storage_alias_spec",
             f"allocate it with storage=tlx.storage_kind.{storage} or use a {have} spec")
    if have == "tmem" and len(desc.shape) != 3:
        fail(op, "local_alloc", f"TMEM buffers must be 2-D (got shape {list(desc.shape[1:])})",
             "allocate TMEM as (rows, columns)")
    return layout.Leaf(op, desc.buffer_units, desc.shape[0], desc.alignment)


def _node(value, spec_op, by_op, seen):
    """The layout node of a reuse-tree element: a member allocation or a nested reuse group."""
    op = value.owner
    if op.name == ALLOC:
        if op.operands[0].owner != spec_op.operation:
            fail(op, "set_buffer_overlap", f"buffer '{display_name(op)}' belongs to another storage_alias_spec",
                 "only put allocations made with reuse=<this spec> in its reuse groups", src_of(op))
        if op.operation in seen:
            fail(op, "set_buffer_overlap", f"buffer '{display_name(op)}' appears twice in the reuse tree",
                 "list every allocation once in the tree")
        seen.add(op.operation)
        return by_op[op.operation]
    if op.name != GROUP:
        fail(op, "set_buffer_overlap", f"'{op.name}' cannot be an element of a reuse group",
             "use allocations from tlx.local_alloc(..., reuse=spec) or nested tlx.reuse_group(...)")
    kind, k = str_attr(op, "group_kind"), int_attr(op, "group_size", 1)
    if kind not in ("shared", "distinct"):
        fail(op, "reuse_group", f"unknown group kind '{kind}'", "use reuse_group_type.shared or .distinct")
    if k < 1:
        fail(op, "reuse_group", f"group_size must be >= 1, got {k}", "pass a positive group_size")
    if len(op.operands) == 0:
        fail(op, "reuse_group", "empty reuse group", "give the group at least one element")
    return layout.Group(op, kind, k, [_node(v, spec_op, by_op, seen) for v in op.operands])
