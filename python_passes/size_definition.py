"""tlx-size-definition (seed 000, step 1): compute or validate each storage_alias_spec's size.

Precondition: tlx ops from tlx-import (or written by hand). For each `tlx.storage_alias_spec`:
  with a `tlx.set_buffer_overlap`: stride between root index groups T = size of the reuse tree
    (shared = K * max, distinct = K * sum), total = index groups * T;
  without: total = max over its allocations of num * buffer size (all start at offset 0).
An explicit `buffer_size_bytes` must be at least the computed total (then T = size // groups).
Units: bytes for SMEM; 32-bit columns for TMEM (an explicit TMEM size in bytes is divided by 128 lanes x 4).
Sets on the spec: `buffer_size`, `buffer_stride`, `buffer_groups` (i64) and `unit` ("bytes"|"columns").
Errors: storage mismatch, duplicate set_buffer_overlap, explicit size too small, distinct overflow,
TMEM over 512 columns, SMEM over the target's limit. A spec with no allocation left is a warning.
"""

from __future__ import annotations

import math
from functools import cmp_to_key

from tlx_alias import targets
from tlx_alias.memdesc import TMEM

from . import reuse_tree as rt
from ._ir import PassContext, fail, int_attr, memdesc_of, ops_named, set_int, set_str, src_of, str_attr

NAME = "tlx-size-definition"


def users(spec_op, name):
    """Users of the spec named `name`, in program order (MLIR use lists are newest-first)."""
    found = [u.owner for u in spec_op.result.uses if u.owner.name == name]
    return sorted(found, key=cmp_to_key(_program_order))


def _program_order(a, b):
    a, b = a.operation, b.operation
    if a.block != b.block:
        return 0
    return -1 if a.is_before_in_block(b) else (1 if b.is_before_in_block(a) else 0)


def leaf_for(ctx: PassContext, spec_storage: str):
    def make(op):
        desc = memdesc_of(op.result, ctx.aliases)
        storage = "tmem" if desc.space == TMEM else "smem"
        if storage != spec_storage:
            fail(op, "local_alloc", f"{storage} allocation uses a {spec_storage} storage_alias_spec",
                 f"allocate it with storage=tlx.storage_kind.{spec_storage} or use a {storage} spec")
        if storage == "tmem" and len(desc.shape) != 3:
            fail(op, "local_alloc", f"TMEM buffers must be 2-D (got shape {list(desc.shape[1:])})",
                 "allocate TMEM as (rows, columns) with rows 64 or 128")
        if storage == "tmem" and desc.shape[1] not in (64, 128):
            fail(op, "local_alloc", f"TMEM buffers need 64 or 128 rows, got {desc.shape[1]}",
                 "use blockM = 64 or 128")
        return rt.Leaf(op, desc.buffer_units, desc.shape[0])
    return make


def tree_of(spec_op, ctx: PassContext):
    """The spec's reuse tree, or None when it has no set_buffer_overlap."""
    sbo = users(spec_op, "tlx.set_buffer_overlap")
    if not sbo:
        return None
    if len(sbo) > 1:
        fail(sbo[1], "set_buffer_overlap",
             "storage_alias_spec already has a set_buffer_overlap defined; each spec can only have one "
             "overlap definition", "call set_buffer_overlap once per spec (choose the tree with constexpr if needed)")
    root_value = sbo[0].operands[1]
    leaf = leaf_for(ctx, str_attr(spec_op, "storage"))
    root = rt.build(root_value, spec_op, leaf)
    if isinstance(root, rt.Leaf):
        root = rt.Group(None, "shared", 1, [root])
    return root


def run(module, ctx: PassContext):
    for spec in ops_named(module, "tlx.storage_alias_spec"):
        storage = str_attr(spec, "storage")
        if storage not in ("smem", "tmem"):
            fail(spec, "storage_alias_spec", f"storage kind '{storage}' cannot be aliased",
                 "use tlx.storage_kind.smem or tlx.storage_kind.tmem (smemCluster is not supported)")
        allocs = users(spec, "tlx.storage_alias_local_alloc")
        if not allocs:
            ctx.warn(spec, f"[{NAME}] storage_alias_spec has no allocations; it reserves nothing")
            continue
        leaf = leaf_for(ctx, storage)
        leaves = [leaf(op) for op in allocs]
        root = tree_of(spec, ctx)
        if root is not None:
            groups = rt.index_groups(root)
            stride = rt.size(root)
            total = groups * stride
        else:
            groups, stride = 1, None
            total = max(l.num * l.size for l in leaves)

        explicit = int_attr(spec, "buffer_size_bytes")
        unit = "columns" if storage == "tmem" else "bytes"
        if explicit is not None:
            if explicit <= 0:
                fail(spec, "storage_alias_spec", f"buffer_size_bytes must be positive, got {explicit}",
                     "pass a positive compile-time size or leave it out")
            given = explicit // targets.TMEM_BYTES_PER_COLUMN if storage == "tmem" else explicit
            if root is not None and given // groups < stride:
                _too_small(spec, root, given // groups, unit)
            if given < total:
                fail(spec, "storage_alias_spec",
                     f"buffer_size_bytes={explicit} is too small: the allocations need {total} {unit}"
                     + (f" ({total * targets.TMEM_BYTES_PER_COLUMN} bytes)" if storage == "tmem" else ""),
                     "raise buffer_size_bytes or leave it out to let the compiler size the spec")
            if root is not None:
                stride = given // groups
                total = groups * stride
            else:
                total = given
        if ctx.exact_views:  # Triton 3.8: every view reinterprets the whole backing, so it must tile it
            tile = math.lcm(*(l.size for l in leaves))
            padded = -(-total // tile) * tile
            if padded != total:
                ctx.warn(spec, f"[{NAME}] padded from {total} to {padded} {unit} so that every buffer size "
                               f"divides it: Triton 3.8 can only reinterpret a whole allocation (3.9 needs no padding)")
                total = padded
        _check_capacity(spec, storage, total, ctx)
        set_int(spec, "buffer_size", total)
        set_int(spec, "buffer_groups", groups)
        set_int(spec, "buffer_stride", stride if stride is not None else 0)
        set_str(spec, "unit", unit)


def _too_small(spec, root, available, unit):
    hit = rt.first_overflow(root, available)
    if isinstance(hit, rt.Group) and hit.kind == "distinct" and hit.op is not None:
        need = rt.unit(hit)
        fail(hit.op, "reuse_group",
             f"not enough space for distinct allocations: need {need} {unit}, have "
             f"{available // max(1, hit.group_size)} {unit} per buffer",
             "raise buffer_size_bytes, or share (not distinct) some of these buffers")
    fail(spec, "storage_alias_spec",
         f"buffer_size_bytes is too small: the reuse tree needs {rt.size(root)} {unit} per buffer index, "
         f"have {available}", "raise buffer_size_bytes or leave it out to let the compiler size the spec")


def _check_capacity(spec, storage, total, ctx: PassContext):
    if storage == "tmem" and total > targets.TMEM_COLUMNS:
        fail(spec, "storage_alias_spec",
             f"tensor memory over capacity: this spec needs {total} columns, the SM has {targets.TMEM_COLUMNS}",
             "use fewer buffers, smaller tiles, or share more of them in the reuse tree")
    if storage == "smem":
        limit = targets.smem_limit(targets.capability(ctx.target))
        if total > limit:
            fail(spec, "storage_alias_spec",
                 f"shared memory over capacity: this spec needs {total} bytes, the target allows {limit}",
                 "use fewer stages or smaller tiles, or share more buffers in the reuse tree")
