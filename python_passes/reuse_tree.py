"""The reuse-group tree of one storage_alias_spec: built from `tlx.reuse_group` ops, checked, sized, placed.

Sizes are in the spec's unit (bytes for SMEM, 32-bit columns for TMEM), for ONE index group of the root:
  leaf            -> its buffer size b
  shared, K       -> K * max(children)          (children share a slot; K sub-slots side by side)
  distinct, K     -> K * sum(children)          (children one after another)

Placement gives each leaf an address function over its buffer index i. With the group sizes
K_1..K_m met on the path from the root (outermost first) and the slot widths U_1..U_m of those groups,
i is read in mixed radix  i = ((g*K_1 + s_1)*K_2 + s_2)...  and
  address(i) = offset + g*T + s_1*U_1 + ... + s_m*U_m
where T is the spec's stride between root index groups. For one group size K whose widest child is the
leaf itself (U = b) this is  offset + (i // K)*T + (i % K)*b : the K sub-tiles of one group are
contiguous. (Seed 000's `scale*i + offset + i % K` does not produce that layout for K > 1.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._ir import display_name, fail, int_attr, src_of, str_attr

WHERE = "reuse_group"


@dataclass
class Leaf:
    op: object          # the tlx.storage_alias_local_alloc op
    size: int           # one buffer, in spec units
    num: int            # buffer count (dim 0)


@dataclass
class Group:
    op: object          # the tlx.reuse_group op (None for an implicit root)
    kind: str           # "shared" | "distinct"
    group_size: int
    children: list = field(default_factory=list)


@dataclass(frozen=True)
class Placement:
    offset: int
    radices: tuple      # K_1..K_m
    strides: tuple      # U_1..U_m


def size(node) -> int:
    if isinstance(node, Leaf):
        return node.size
    return node.group_size * unit(node)


def unit(node) -> int:
    """Width of one of a group's K sub-slots: max of the children if shared, their sum if distinct."""
    sizes = [size(c) for c in node.children]
    return max(sizes) if node.kind == "shared" else sum(sizes)


def leaves(node):
    if isinstance(node, Leaf):
        yield node, 1
        return
    for child in node.children:
        for leaf, k in leaves(child):
            yield leaf, k * node.group_size


def index_groups(root) -> int:
    """Root index groups the tree needs: the most any leaf uses (num / product of group sizes above it).

    A leaf with fewer buffers simply leaves later groups unused; a count that does not split into
    whole groups is an error.
    """
    groups = 1
    for leaf, k in leaves(root):
        if leaf.num % k:
            fail(leaf.op, WHERE, f"buffer '{_name(leaf.op)}' has {leaf.num} buffers, which cannot be split "
                                 f"into groups of {k}",
                 f"make its buffer count a multiple of the product of the group_size values above it ({k})")
        groups = max(groups, leaf.num // k)
    return groups


def place(node, offset=0, radices=(), strides=(), out=None) -> dict:
    """Map id(leaf) -> (leaf, Placement)."""
    out = {} if out is None else out
    if isinstance(node, Leaf):
        out[id(node)] = (node, Placement(offset, tuple(radices), tuple(strides)))
        return out
    if node.group_size > 1:
        radices, strides = radices + (node.group_size,), strides + (unit(node),)
    if node.kind == "shared":
        for child in node.children:
            place(child, offset, radices, strides, out)
    else:
        running = offset
        for child in node.children:
            place(child, running, radices, strides, out)
            running += size(child)
    return out


def first_overflow(node, available: int):
    """Top-down: the first node that does not fit in the space its parent gives it."""
    if size(node) <= available:
        return None
    if isinstance(node, Leaf) or node.kind == "distinct":
        return node
    per_slot = available // node.group_size
    for child in node.children:
        hit = first_overflow(child, per_slot)
        if hit is not None:
            return hit
    return node


def build(value, spec_op, leaf_of, seen=None, parent_kind=None):
    """Tree rooted at `value` (a reuse_group result or an aliased allocation)."""
    seen = set() if seen is None else seen
    op = value.owner
    if op.name == "tlx.storage_alias_local_alloc":
        if op.operands[0].owner != spec_op.operation:
            fail(op, "set_buffer_overlap",
                 f"buffer '{_name(op)}' belongs to another storage_alias_spec",
                 "only put allocations made with reuse=<this spec> in its reuse groups", src_of(op))
        key = str_attr(op, "tlx.alloc") or str(op.location)
        if key in seen:
            fail(op, "set_buffer_overlap", f"buffer '{_name(op)}' appears twice in the reuse tree",
                 "list every allocation once in the tree")
        seen.add(key)
        return leaf_of(op)
    if op.name != "tlx.reuse_group":
        fail(op, "set_buffer_overlap", f"'{op.name}' cannot be an element of a reuse group",
             "use allocations from tlx.local_alloc(..., reuse=spec) or nested tlx.reuse_group(...)")
    kind = str_attr(op, "group_kind")
    k = int_attr(op, "group_size", 1)
    if kind not in ("shared", "distinct"):
        fail(op, WHERE, f"unknown group kind '{kind}'", "use reuse_group_type.shared or .distinct")
    if k < 1:
        fail(op, WHERE, f"group_size must be >= 1, got {k}", "pass a positive group_size")
    if parent_kind == kind:
        fail(op, WHERE, f"a '{kind}' group directly inside a '{kind}' group",
             "nested reuse groups must alternate between shared and distinct: merge this group into its parent")
    if len(op.operands) == 0:
        fail(op, WHERE, "empty reuse group", "give the group at least one element")
    group = Group(op, kind, k)
    for operand in op.operands:
        group.children.append(build(operand, spec_op, leaf_of, seen, kind))
    return group


def _name(op):
    return display_name(op)
