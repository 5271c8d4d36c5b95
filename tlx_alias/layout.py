"""The layout of one storage_alias_spec: sizes, offsets, and the index formula (one home for this arithmetic).

Units are bytes (SMEM) or 32-bit TMEM columns. A reuse tree's nodes are `Leaf` (one allocation: `size`
units per buffer, `num` buffers) and `Group` ("shared" or "distinct", `group_size` K). Sizes per buffer index,
as TLX computes them:

    leaf              -> its buffer size b
    shared, K         -> K * max(children)                 (children share a slot; K sub-slots side by side)
    distinct          -> children one after another, each start rounded up to its alignment; a group_size
                         on a distinct group has no effect (TLX ignores it too)

Alignment (TLX): SMEM 128 bytes for every distinct child and for the stride between index groups; TMEM the
widest leaf under the child (for a child's start) and under the whole tree (for the stride).

Placement gives each leaf an address function over its buffer index i. With the group sizes K_1..K_m met on
the path from the root (outermost first) and the sub-slot widths U_1..U_m of those groups, i is read in mixed
radix i = ((g*K_1 + s_1)*K_2 + s_2)... and

    address(i) = offset + g*T + s_1*U_1 + ... + s_m*U_m          (T: the stride between root index groups)

For one group size K whose widest child is the leaf itself (U = b) this is offset + (i // K)*T + (i % K)*b:
the K sub-tiles of one group are contiguous. (TLX's rewrite `scale*i + offset + i % K` does not keep them
contiguous, and can put a sub-tile on a `distinct` sibling; see README, "TLX and tlx-alias".)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

SMEM_CHILD_ALIGNMENT = 128   # bytes: where a `distinct` child may start within a spec (the backing itself: targets)


@dataclass(eq=False)
class Leaf:
    ref: object        # what the caller identifies the allocation by (an op, a name)
    size: int          # one buffer, in spec units
    num: int           # buffer count
    align: int = 1     # units its first buffer's start must be a multiple of (a linear shared layout's alignment)


@dataclass(eq=False)
class Group:
    ref: object        # the reuse_group's op or source line (None for an implicit root)
    kind: str          # "shared" | "distinct"
    group_size: int
    children: list = field(default_factory=list)


@dataclass(frozen=True)
class Placement:
    offset: int
    radices: tuple     # K_1..K_m
    strides: tuple     # U_1..U_m


def leaves(node, k=1):
    """(leaf, product of the shared group sizes above it) for every leaf under `node`."""
    if isinstance(node, Leaf):
        yield node, k
        return
    inner = k * node.group_size if node.kind == "shared" else k
    for child in node.children:
        yield from leaves(child, inner)


def widest(node) -> int:
    return max(leaf.size for leaf, _ in leaves(node))


def alignment(node, storage: str) -> int:
    """Where a `distinct` child may start: 128 bytes in SMEM, its widest leaf's columns in TMEM."""
    return SMEM_CHILD_ALIGNMENT if storage == "smem" else widest(node)


def align_up(x: int, a: int) -> int:
    return -(-x // a) * a


def size(node, storage: str) -> int:
    if isinstance(node, Leaf):
        return node.size
    if node.kind == "shared":
        return node.group_size * max(size(c, storage) for c in node.children)
    return _distinct_span(node, storage)[-1]


def _distinct_span(node, storage):
    """Start of each child of a distinct group, then its end."""
    starts, running = [], 0
    for child in node.children:
        running = align_up(running, alignment(child, storage))
        starts.append(running)
        running += size(child, storage)
    return starts + [running]


def sub_slot(node, storage: str) -> int:
    """Width of one of a shared group's K sub-slots (the widest child)."""
    return max(size(c, storage) for c in node.children)


def stride(root, storage: str) -> int:
    """Units between root index groups: the tree's size rounded up to the spec's alignment."""
    return align_up(size(root, storage), alignment(root, storage))


def total(root, storage: str) -> int:
    """Units a spec with this tree occupies: index groups x stride (before an explicit size or padding)."""
    return index_groups(root) * stride(root, storage)


def index_groups(root) -> int:
    """Root index groups the tree needs: the most any leaf uses (num / product of group sizes above it).
    Raises ValueError(leaf, k) for a leaf whose buffer count does not split into whole groups."""
    groups = 1
    for leaf, k in leaves(root):
        if leaf.num % k:
            raise ValueError(leaf, k)
        groups = max(groups, leaf.num // k)
    return groups


def place(node, storage: str, offset=0, radices=(), strides=(), out=None) -> dict:
    """Map id(leaf) -> (leaf, Placement)."""
    out = {} if out is None else out
    if isinstance(node, Leaf):
        out[id(node)] = (node, Placement(offset, tuple(radices), tuple(strides)))
        return out
    if node.kind == "shared":
        if node.group_size > 1:
            radices, strides = radices + (node.group_size,), strides + (sub_slot(node, storage),)
        for child in node.children:
            place(child, storage, offset, radices, strides, out)
    else:
        for child, start in zip(node.children, _distinct_span(node, storage)):
            place(child, storage, offset + start, radices, strides, out)
    return out


def overlapping(root, storage: str) -> list:
    """Leaves whose units meet another leaf's at some buffer index, in tree order: the sharing that giving a
    leaf its own allocation would undo (a leaf a shared group holds beside smaller siblings may meet none)."""
    t = stride(root, storage)
    spans = []
    for leaf, where in place(root, storage).values():
        view = ViewLayout(where.offset, t, leaf.size, leaf.num, where.radices, where.strides)
        spans.append((leaf, [(view.address(i), view.address(i) + leaf.size) for i in range(leaf.num)]))
    return [a for a, mine in spans
            if any(b is not a and any(x0 < y1 and y0 < x1 for x0, x1 in mine for y0, y1 in theirs)
                   for b, theirs in spans)]


def without(node, leaf):
    """A copy of the tree with `leaf` taken out (groups left empty go too); None if nothing is left."""
    if isinstance(node, Leaf):
        return None if node is leaf else node
    children = [c for c in (without(child, leaf) for child in node.children) if c is not None]
    return Group(node.ref, node.kind, node.group_size, children) if children else None


def first_overflow(node, storage: str, available: int):
    """Top-down: the first node that does not fit in the space its parent gives it."""
    if size(node, storage) <= available:
        return None
    if isinstance(node, Leaf) or node.kind == "distinct":
        return node
    per_slot = available // node.group_size
    for child in node.children:
        hit = first_overflow(child, storage, per_slot)
        if hit is not None:
            return hit
    return node


# ------------------------------------------------------------------------------------------ the index formula

@dataclass(frozen=True)
class ViewLayout:
    """Where buffer i of a lowered view lies: offset + (i // K) * stride + mixed-radix digits (units).

    Written on each view as the dictionary attribute `tlx.view = {base = .., group = K, num = N, offset = ..,
    radices = array<i64: ..>, slot = .., stride = .., strides = array<i64: ..>}` (`fields`/`from_fields`,
    `tlx_alias._mlir.to_attr`/`from_attr`): the lowering writes it, the verifier, the mutation harness and the
    demo read it; `text` is its display in messages. `base`: where the IR's view starts (units into the spec,
    a multiple of the slot). A view that starts at its first buffer instead of the spec's start spans only its own
    buffers, which keeps Triton 3.9's exact shared-memory analyses (one footprint per possible index) small.
    Offsets and strides stay spec-relative; `slot_of` counts slots from the view's start. `width`: the units of
    one buffer where it is narrower than the view's slot (a TMEM view of 128-column slots whose buffers are one
    column: the index selects the slot, a `ttng.tmem_subslice` the buffer in it, at `offset` modulo the slot);
    0 (not written): the buffer is the whole slot.
    """
    offset: int
    stride: int
    slot: int                  # one buffer of the view
    num: int                   # the user's buffer count
    radices: tuple = ()        # K_1..K_m, outermost first
    strides: tuple = ()        # U_1..U_m
    group: int = None          # K: the product of the radices, unless read from IR that says otherwise
    base: int = 0              # where the IR's view starts (units into the spec)
    width: int = 0             # units of one buffer narrower than its slot; 0: the whole slot

    def __post_init__(self):
        if self.group is None:
            object.__setattr__(self, "group", math.prod(self.radices))

    def fields(self) -> dict:
        """The entries of the view's `tlx.view` attribute."""
        out = {"offset": self.offset, "stride": self.stride, "group": self.group, "num": self.num,
               "slot": self.slot, "radices": list(self.radices), "strides": list(self.strides), "base": self.base}
        if self.width:
            out["width"] = self.width
        return out

    @staticmethod
    def from_fields(kv: dict) -> "ViewLayout":
        """The layout a `tlx.view` attribute's entries describe; K as written (a reader checks it). Raises
        KeyError (an entry missing) or ValueError (an entry of the wrong kind, radices and strides unpaired)."""
        ints = {k: kv[k] for k in ("offset", "stride", "group", "num", "slot", "base")}
        digits = (tuple(kv["radices"]), tuple(kv["strides"]))
        if not all(type(v) is int for v in ints.values()) or not all(type(x) is int for d in digits for x in d):
            raise ValueError("tlx.view: integer entries, and radices and strides arrays of integers, expected")
        if len(digits[0]) != len(digits[1]):
            raise ValueError("tlx.view: as many strides as radices expected")
        width = kv.get("width", 0)
        if type(width) is not int:
            raise ValueError("tlx.view: width must be an integer")
        return ViewLayout(ints["offset"], ints["stride"], ints["slot"], ints["num"], *digits, ints["group"],
                          ints["base"], width)

    def text(self) -> str:
        """For messages: offset=..,stride=..,group=..,num=..,slot=..,radices=[..],strides=[..][,base=..]."""
        return (f"offset={self.offset},stride={self.stride},group={self.group},num={self.num},slot={self.slot},"
                f"radices={list(self.radices)},strides={list(self.strides)}"
                + (f",base={self.base}" if self.base else "") + (f",width={self.width}" if self.width else ""))

    @property
    def buffer(self) -> tuple:
        """(units from its slot's start, units) of one buffer: the whole slot, or `width` units at the offset's
        remainder modulo the slot."""
        return ((self.offset - self.base) % self.slot, self.width) if self.width else (0, self.slot)

    def span(self) -> tuple:
        """[first, end) units of the spec that the view's buffers cover."""
        starts = [self.address(i) for i in range(self.num)]
        return min(starts), max(starts) + self.slot

    def slot_of(self, i, ops=None):
        """The view slot buffer i lands in: (offset - base) + (i // K) * stride + sum of digits (in slots).

        `ops` gives the arithmetic: Python ints by default; the verifier passes Z3's, the lowering a builder
        of `arith` ops, so the three can never disagree.
        """
        ops = ops or _INT
        b = self.slot
        out = ops.mul(ops.div(i, ops.const(self.group)), ops.const(self.stride // b)) if self.group != 1 else \
            ops.mul(i, ops.const(self.stride // b))
        rest = i
        digits = list(reversed(list(zip(self.radices, self.strides))))      # innermost first
        for n, (k, u) in enumerate(digits):
            out = ops.add(out, ops.mul(ops.rem(rest, ops.const(k)), ops.const(u // b)))
            if n + 1 < len(digits):
                rest = ops.div(rest, ops.const(k))
        return ops.add(out, ops.const((self.offset - self.base) // b))

    def affine(self):
        """(d, c) with slot_of(i) == d * i + c for every buffer i in [0, num), or None. The lowering emits this
        form where it exists (a ring whose buffers all lie in one index group: i // K is 0 for every valid
        i), and the verifier proves it equal to `slot_of` over [0, num) like any other rewrite."""
        if self.num > 1 << 12:
            return None
        slots = [self.slot_of(i) for i in range(self.num)]
        d = slots[1] - slots[0] if self.num > 1 else 1
        return (d, slots[0]) if all(x == d * i + slots[0] for i, x in enumerate(slots)) else None

    def address(self, i: int) -> int:
        """Units into the spec where buffer i starts."""
        return self.base + self.slot_of(i) * self.slot + self.buffer[0]


class IntOps:
    """Python integers, non-negative operands: floor division and modulo."""
    const = staticmethod(lambda v: v)
    add = staticmethod(lambda a, b: a + b)
    mul = staticmethod(lambda a, b: a * b)
    div = staticmethod(lambda a, b: a // b)
    rem = staticmethod(lambda a, b: a % b)


_INT = IntOps()
