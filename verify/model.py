"""Recover the memory model of a lowered module: allocations, their views, and every buffer index.

Read from the upstream bindings (generic form, Triton ops unregistered), one function per kernel:

- `Alloc`: a `ttg.local_alloc` (SMEM, bytes) or `ttng.tmem_alloc` (TMEM, 32-bit columns x 128 lanes).
- `View`: a descriptor of an allocation before any buffer is selected — the allocation itself, or a
  `ttg.memdesc_reinterpret` / subslice / transpose / reshape of it, at a static offset. Its dim 0 counts
  buffers. TLX views (Contract 2) carry `tlx.view` (offset, stride, group, num, slot; width where a buffer is a
  window of its slot) and `tlx.alloc`.
- `Site`: a `ttg.memdesc_index` with its index as a Z3 term, the bound it must respect, and (for TLX
  views) the logical index recovered from under the `tlx.index_rewrite` ops.
- `Sub`: a descriptor derived from one selected buffer (reinterpret, slice, nested index): must stay inside it.
- `Untracked`: a descriptor whose origin or footprint the model cannot follow (a function argument, an op
  not in `DESC_OPS`, a loop-carried descriptor that changes between iterations, a reinterpret of a slice
  it cannot place). The properties of the allocations it may reach are "cannot prove", never "proven".

Index expressions are Z3 terms from `encode.Encoder`. Descriptor ops are handled by one function each
in `DESC_OPS` (keyed by op name); descriptors are followed through `scf.for`, `scf.while`, `scf.if`,
`arith.select` and `warp_specialize` captures. Every memdesc operand of every op is resolved, so a use
whose descriptor cannot be followed is recorded, not skipped.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import z3

from tlx_alias import ttg
from tlx_alias.layout import IntOps, ViewLayout
from tlx_alias._mlir import from_attr, ir, per_type, terminator

from .encode import (INT_OPS, Encoder, _and, _attr_int, _attr_ints, _attr_str, _or, _width, add, int_var, loc_info,
                     mul, num, substitute)
from tlx_alias.memdesc import SMEM, TMEM, MalformedType, MemDesc, UnsizedType, parse_memdesc

from . import wellformed
from .wellformed import MalformedIR

ALLOC_OPS = {"ttg.local_alloc": SMEM, "ttng.tmem_alloc": TMEM}
# Ops that pass a descriptor on without touching memory (followed by `refs`).
_FORWARDING = {"scf.for", "scf.while", "scf.if", "scf.yield", "scf.condition", "arith.select", "ttg.warp_specialize",
               "ttg.warp_specialize.partitions", "ttg.warp_yield", "ttg.warp_return", "ttg.local_dealloc",
               "ttng.tmem_dealloc"}
_SCALAR_DIALECTS = ("arith.", "math.")   # their ops take and make no descriptor (but `arith.select` may choose one)


def _quiet_dialect_lookups(namespaces=("tt", "ttg", "ttng", "nvws", "nvg", "amdgpu", "proton", "gluon", "tlx")):
    """`value.owner` on an op of an unregistered dialect makes the bindings try to import
    `<provider>.dialects.<namespace>` each time (~0.1 ms: a failed import walks sys.path). An empty
    module for the namespaces that have none makes it instant; nothing else changes (no op classes)."""
    import importlib.util
    import sys
    import types
    from tlx_alias._mlir import PROVIDER
    for ns in namespaces:
        name = f"{PROVIDER}.dialects.{ns}"
        if name not in sys.modules:
            try:
                missing = importlib.util.find_spec(name) is None
            except (ImportError, ValueError):
                missing = True
            if missing:
                sys.modules[name] = types.ModuleType(name)


_quiet_dialect_lookups()
LOGICAL_X = "logical.x"  # the bound variable of the rewrite lemma (dotted: never a kernel name)


# ---------------------------------------------------------------------------------------------- records

class _Z3Ops(IntOps):
    """`ViewLayout.slot_of` over Z3 Ints (or Python ints): on Z3 Ints `/` by a positive constant is floor division."""
    add = staticmethod(add)
    mul = staticmethod(mul)
    div = staticmethod(lambda a, b: a // b if isinstance(a, int) else a / b)


Z3_OPS = _Z3Ops()


@dataclass(eq=False)
class Alloc:
    op: object
    md: MemDesc
    name: str
    src: str
    func: str
    spec: str | None = None          # tlx.backing (Contract 2) or tlx.spec
    views: list = field(default_factory=list)
    subs: list = field(default_factory=list)

    @property
    def space(self):
        return self.md.space

    @property
    def size(self) -> int:
        return self.md.size

    @property
    def unit(self) -> str:
        return "bytes" if self.space == SMEM else "cols"


@dataclass(eq=False)
class View:
    alloc: Alloc
    md: MemDesc
    offset: int                      # static offset inside the allocation (units)
    name: str
    src: str
    exact: bool = True               # False: footprint over-approximated (each buffer = whole parent)
    tlx: ViewLayout | None = None
    alloc_id: str | None = None      # tlx.alloc
    no_tree: bool = False            # tlx.no_reuse_tree: its spec had no set_buffer_overlap
    backing: bool = False            # the Contract-2 backing allocation itself (not a user view)
    whole_extent: int | None = None  # footprint of one buffer (or of the view) when not exact
    sites: list = field(default_factory=list)
    origin: str = ""                 # how it was made: "alloc", "reinterpret", ...
    pitch: int | None = None         # units between buffers when they are not back to back (inner-dim slices)
    box: tuple | None = None         # inner-dim slice of each buffer of `root`: (anchor, offsets, shape)
    root: "View | None" = None       # the view whose buffers this inner-dim slice cuts
    used_whole: bool = False         # some op accesses the view as a whole (not through `.index`)
    accessed_at: str = ""            # the source line of the first op that accesses it (a load, store, MMA ...)
    accessed_itself: bool = False    # some access is not through a reinterpret of one of its buffers
    unreadable: str = ""             # why its tlx.view could not be read (P1: "cannot prove")
    slot_accessed_at: str = ""       # tlx.view width: where an op accesses a whole slot, not its buffer's window
    makers: list = field(default_factory=list)   # the ops that make it (equal reinterprets are one view)

    @property
    def indexed(self) -> bool:
        return any(s.top for s in self.sites)

    @property
    def rank_buffers(self) -> int:
        return self.md.shape[0] if len(self.md.shape) >= 2 else 1

    @property
    def num(self) -> int:
        """Logical buffers: tlx num, else dim 0 when something indexes the view, else 1 (used whole)."""
        if self.tlx:
            return self.tlx.num
        return self.rank_buffers if self.indexed else 1

    @property
    def size(self) -> int:
        """Units of one (logical) buffer (not exact: the units that certainly contain it)."""
        if self.pitch is not None:
            return self.whole_extent if not self.exact else self.md.buffer_units
        if not self.exact:
            return self.whole_extent
        if self.tlx and self.tlx.width:
            return self.tlx.width
        return self.md.buffer_units if (self.indexed or self.tlx) else self.md.size

    @property
    def extent(self) -> int:
        if self.pitch is not None:
            return self.pitch * (self.rank_buffers - 1) + self.size
        return self.whole_extent if not self.exact else self.md.size

    @property
    def in_slot(self) -> int:
        """Units from the start of the slot an index selects to its buffer (tlx.view width; else 0)."""
        return self.tlx.buffer[0] if self.exact and self.tlx and self.tlx.width else 0

    def lo(self, i):
        """Start (units, inside the allocation) of logical buffer i: a Z3 term for a Z3 i, an int for an int."""
        return add(self.slot_lo(i), self.in_slot) if self.in_slot else self.slot_lo(i)

    def slot_lo(self, i):
        """Start of the slot logical buffer i lies in (what the IR's index selects; `lo` but for a buffer that
        is a window of its slot)."""
        if self.pitch is not None:
            return add(self.offset, mul(i, self.pitch))
        if not self.exact:
            return add(self.offset, mul(0, i))
        if self.tlx:
            return add(self.offset, mul(self.tlx.slot_of(i, Z3_OPS), self.md.buffer_units))
        return add(self.offset, mul(i, self.size))


@dataclass(eq=False)
class Site:
    view: View
    op: object
    index: object                    # Z3 Int: the index operand as the IR computes it
    bound: int                       # it must lie in [0, bound)
    src: str
    name: str
    top: bool                        # selects a buffer of `view` (False: nested index below a buffer)
    cond: object                     # path condition (enclosing scf.if branches)
    text: str                        # the index expression in the kernel's names
    logical: object = None           # TLX: the user's index under the tlx.index_rewrite ops
    logical_text: str = ""
    rewrite: object = None           # TLX: the rewrite ops as a term of LOGICAL_X (None: not separable)
    predicated: bool = False         # cond includes the `pred` of the ops that use the buffer
    logical_value: object = None     # TLX: the IR value of the user's index (a concrete run reads it)


@dataclass(eq=False)
class Sub:
    view: View
    site: Site
    rel: object                      # offset from the start of the selected buffer (Z3 term)
    extent: int
    name: str
    src: str
    md: MemDesc
    exact: bool = True
    parent: "Sub | None" = None      # the derived descriptor it was derived from (None: from the buffer)
    box: tuple | None = None         # (anchor, offsets, shape): an inner-dim slice, in elements of the anchor
    borrow: bool = False             # a reinterpret is on its way from the buffer: a new tenant of those bytes
    accessed: bool = False           # some op reads or writes through it (not only derives others from it)
    block: object = None             # the block of the op that made it
    op: object = None                # the op that made it

    def ancestors(self):
        out, cur = [], self.parent
        while cur is not None:
            out.append(cur)
            cur = cur.parent
        return out


@dataclass
class Ref:
    """What a descriptor SSA value denotes: a view (site None) or a part of one selected buffer."""
    view: View
    site: Site | None
    rel: object
    md: MemDesc
    extent: int
    exact: bool = True
    sub: Sub | None = None           # the Sub record of a derived descriptor
    box: tuple | None = None         # see Sub.box

    def key(self):
        return (id(self.view), id(self.site), str(self.rel), self.md.text, id(self.sub))


@dataclass
class Untracked:
    """A descriptor the model cannot follow: `alloc` None means any allocation of `space` may be reached."""
    reason: str
    src: str
    alloc: Alloc | None = None
    space: str | None = None


class ReuseTree:
    """The `tlx.overlap` reuse tree of one spec: relation (shared/distinct) between two alloc ids."""

    def __init__(self, node):
        self.paths = {}
        self._walk(node, [])

    def _walk(self, node, path):
        if isinstance(node, str):
            self.paths[node] = list(path)
            return
        for k, child in enumerate(node.get("children", [])):
            self._walk(child, path + [(id(node), node.get("kind", "shared"), k, node.get("src"))])

    def relation(self, a: str, b: str):
        """(kind of the lowest common group, its src) or (None, None) when a or b is not in the tree."""
        pa, pb = self.paths.get(a), self.paths.get(b)
        if pa is None or pb is None:
            return None, None
        lca = None
        for x, y in zip(pa, pb):
            if x[0] != y[0]:
                break
            lca = x
            if x[2] != y[2]:
                break
        return (lca[1], lca[3]) if lca else (None, None)


# ---------------------------------------------------------------------------------------------- model

@dataclass
class Kernel:
    name: str
    src: str                         # the kernel's definition line (or its name when locations are lost)
    allocs: list
    sites: list
    notes: list
    tree: dict                       # spec id -> ReuseTree
    enc: Encoder
    untracked: list = field(default_factory=list)
    bad: list = field(default_factory=list)     # (source Ref, src, MemDesc, offsets): slices outside their source
    func: object = None                          # the tt.func op (for bounded concrete runs: verify.execute)
    aliases: dict = field(default_factory=dict)  # attribute alias definitions (for memdesc types met later)
    touches: dict = field(default_factory=dict)  # access op -> names of the allocations it reaches (P7's coverage)
    ops: list = field(default_factory=list)      # every op of the function, pre-order (one walk for all readers)
    types: dict = field(default_factory=dict)    # MLIR type -> its MemDesc or None, as the model parsed it (P7 reads
                                                 # the same types: parsing them again was a tenth of its first run)


class ModelBuilder:
    def __init__(self, func_op, aliases, path, ctx):
        self.func = func_op
        self.aliases = aliases or {}
        self.path = path
        self.enc = Encoder(ctx, path)
        self.allocs: list[Alloc] = []
        self.sites: list[Site] = []
        self.notes: list[str] = []
        self.untracked: list[Untracked] = []
        self.trees: dict = {}
        self.memo: dict = {}
        self._views: dict = {}
        self._subs: dict = {}
        self._types: dict = {}
        self._of_type: dict = {}   # MLIR type -> MemDesc or None (with the kernel: a type keeps its context alive)
        self.touches: dict = {}
        self.bad: list = []            # (source Ref, op, MemDesc, offsets) of slices outside their source
        self._sites: dict = {}

    # -- entry
    def build(self) -> Kernel:
        wellformed.check(self.func)     # MalformedIR (bad input) before anything reads the ops' structure
        ops = []
        self.func.walk(lambda op: (ops.append(getattr(op, "operation", op)), ir.WalkResult.ADVANCE)[1],
                       ir.WalkOrder.PRE_ORDER)
        self.enc.prepare(ops)
        for op in ops:
            name = op.name
            if name.startswith(_SCALAR_DIALECTS) and name != "arith.select":
                continue                # integers, floats and tensors only: no descriptor, no tlx attribute
            for attr in ("tlx.overlap",):
                text = _attr_str(op, attr)
                if text:
                    spec = _attr_str(op, "tlx.spec") or _attr_str(op, "tlx.backing") or "?"
                    try:
                        self.trees.setdefault(spec, ReuseTree(json.loads(text)))
                    except (ValueError, AttributeError) as exc:
                        self.notes.append(f"unreadable tlx.overlap on {op.name}: {exc}")
            # every descriptor an op defines or uses: a use of one the model cannot follow is recorded
            for v in op.results:
                if self.md(v) is not None:
                    self.refs(v)
            desc_operands = []           # (a value's type read once: each read is a binding call and a hash)
            for v in op.operands:
                if self.md(v) is not None:
                    desc_operands.append(v)
                    self.refs(v)
            if name not in DESC_OPS and name not in _FORWARDING:   # an access (load, store, mma ...)
                for v in desc_operands:
                    for r in self.refs(v):
                        self.touches.setdefault(op, set()).add(r.view.alloc.name)
                        r.view.accessed_at = r.view.accessed_at or loc_info(op.location, self.path)[1] or "?"
                        if r.site is None:
                            r.view.used_whole = True
                        elif r.sub is None and r.view.tlx and r.view.tlx.width:   # a whole slot, not its window
                            r.view.slot_accessed_at = (r.view.slot_accessed_at
                                                       or loc_info(op.location, self.path)[1] or "?")
                        if r.sub is not None:
                            r.sub.accessed = True
                        if r.sub is None or not r.sub.borrow:
                            r.view.accessed_itself = True
        name = _attr_str(self.func, "sym_name") or "kernel"
        src = self.where(self.func)[1]
        return Kernel(name, src or f"kernel {name}", self.allocs, self.sites, self.notes, self.trees, self.enc,
                      self.untracked, self.bad, self.func, self.aliases, self.touches, ops, self._of_type)

    def md(self, value) -> MemDesc | None:
        return per_type(self._of_type, value.type, lambda text: self._md_of_text(text, value))

    def _md_of_text(self, text, value) -> MemDesc | None:
        if "memdesc<" not in text:
            return None
        if text not in self._types:
            try:
                md = parse_memdesc(text, self.aliases)
                if md is not None and md.space == TMEM and not md.resolved:
                    raise MalformedType(f"the TMEM encoding {md.encoding} of the type {text} is not defined in "
                                        f"this module (no `{md.encoding} = ...` line): its columns are unknown")
                self._types[text] = md
            except MalformedType as exc:   # bad input: named at the op that makes (or receives) the value
                owner = value.owner.region.owner if isinstance(value, ir.BlockArgument) else value.owner
                owner = getattr(owner, "operation", owner)
                if isinstance(exc, UnsizedType):   # valid IR this checker cannot size
                    raise MalformedIR(owner, f"{owner.name}: {exc}", unsupported=True) from None
                if exc.element is None:
                    raise MalformedIR(owner, f"{owner.name}: {exc}") from None
                try:      # an element type MLIR reads (e.g. complex<f32>) is valid IR this checker cannot size
                    ir.Type.parse(exc.element, owner.context)
                except Exception:  # MLIRError: not a type at all
                    raise MalformedIR(owner, f"{owner.name}: the element type {exc.element!r} of the type "
                                      f"{text} is not a type") from None
                raise MalformedIR(owner, f"{owner.name}: {exc}", unsupported=True) from None
        return self._types[text]

    def where(self, op):
        name, src = loc_info(op.location, self.path)
        return _attr_str(op, "tlx.name") or name, _attr_str(op, "tlx.src") or src

    def untrack(self, reason, src, refs=(), md=None):
        """Record a descriptor the model cannot follow: the allocations of `refs`, else every one of md's space."""
        new = ([Untracked(reason, src, alloc) for alloc in dict.fromkeys(r.view.alloc for r in refs)] if refs
               else [Untracked(reason, src, None, md.space if md is not None else None)])
        for u in new:
            if all((u.reason, u.src, u.alloc, u.space) != (w.reason, w.src, w.alloc, w.space) for w in self.untracked):
                self.untracked.append(u)

    # -- what a descriptor value denotes (list of alternatives), memoized
    def refs(self, v) -> list:
        known = self.memo.get(v)                # (one lookup: a value's hash is a binding call)
        if known is not None:
            return known
        self.memo[v] = []                       # cycle guard (loop-carried descriptors)
        out = self._refs(v)
        uniq, seen = [], set()
        for r in out:
            if r.key() not in seen:
                seen.add(r.key())
                uniq.append(r)
        self.memo[v] = uniq
        return uniq

    def _carried(self, v, loop, init_v, yielded_v):
        """A loop-carried descriptor: its first value and whatever the loop yields, to a fixpoint (what the
        loop body derives from it is resolved again each time the set grows: a ring buffer selected anew
        each iteration, ping-pong descriptors)."""
        refs = self.refs(init_v)
        for _ in range(8):
            self.memo[v] = refs
            known = {r.key() for r in refs}
            extra = [r for r in self.refs(yielded_v) if r.key() not in known]
            if not extra:
                return refs
            refs = refs + extra
            self._forget(loop, v)
        self.untrack(f"a descriptor carried by the loop at {self.where(loop)[1] or '?'} takes more values than "
                     "this checker follows", self.where(loop)[1], refs)
        return refs

    def _forget(self, loop, keep):
        """Drop what was resolved inside a loop (it may depend on a carried descriptor that grew)."""
        def drop(op):
            for r in op.results:
                self.memo.pop(r, None)
            for region in op.regions:
                for blk in region.blocks:
                    for a in blk.arguments:
                        if a != keep:
                            self.memo.pop(a, None)
            return ir.WalkResult.ADVANCE
        for region in loop.regions:
            for blk in region.blocks:
                for op in blk.operations:
                    getattr(op, "operation", op).walk(drop, ir.WalkOrder.PRE_ORDER)
        for r in loop.results:
            self.memo.pop(r, None)

    def _refs(self, v) -> list:
        if isinstance(v, ir.BlockArgument):
            block = v.owner
            parent = getattr(block.region.owner, "operation", block.region.owner)
            k = v.arg_number
            if parent.name == ttg.WS_PARTITIONS:
                return self.refs(ttg.capture_of(v))
            if parent.name == "scf.for" and k > 0:
                yielded = terminator(block).operands[k - 1]
                return self._carried(v, parent, parent.operands[3 + k - 1], yielded)
            if parent.name == "scf.while":
                before, after = parent.regions[0].blocks[0], parent.regions[1].blocks[0]
                if block == before:
                    return self._carried(v, parent, parent.operands[k], terminator(after).operands[k])
                return self.refs(terminator(before).operands[1 + k])   # scf.condition's forwarded values
            where = self.where(parent)[1]
            what = (f"an argument of function {_attr_str(parent, 'sym_name')}" if parent.name == "tt.func"
                    else f"a block argument of {parent.name}")
            self.untrack(f"a descriptor that is {what} (its origin is not followed)", where, md=self.md(v))
            return []
        op = getattr(v.owner, "operation", v.owner)
        name = op.name
        if name in ALLOC_OPS:
            return [self._new_alloc(op, v)]
        if name == "scf.for":
            k = v.result_number
            return self.refs(op.operands[3 + k]) + self.refs(
                terminator(op.regions[0].blocks[0]).operands[k])
        if name == "scf.while":
            return self.refs(terminator(op.regions[0].blocks[0]).operands[1 + v.result_number])
        if name == "scf.if":
            out = []
            for region in op.regions:
                for blk in region.blocks:
                    out += self.refs(terminator(blk).operands[v.result_number])
            return out
        if name == "arith.select":
            return self.refs(op.operands[1]) + self.refs(op.operands[2])
        if name == "ub.poison":
            return []                            # no value: nothing can be accessed through it
        md = self.md(v)
        srcs = self.refs(op.operands[0]) if len(op.operands) and self.md(op.operands[0]) is not None else []
        handler = DESC_OPS.get(name)
        if handler is None:
            self.untrack(f"{name} makes a descriptor this checker does not model", self.where(op)[1], srcs, md)
            return []
        return [r for src in srcs for r in handler(self, op, v, src, md) if r is not None]

# -- records
    def _unique(self, name, src):
        """An allocation's name, made unique in the kernel (verdicts, P7's barriers and its access history are
        keyed by it; Gluon names every mbarrier array of a helper `bar`): a repeated name gets its line."""
        taken = {a.name for a in self.allocs}
        if name not in taken:
            return name
        line = src.rsplit(":", 1)[-1] if src else ""
        out, k = f"{name}@{line}" if line else name, 2
        while out in taken:
            out, k = f"{name}@{line}#{k}" if line else f"{name}#{k}", k + 1
        return out

    def _new_alloc(self, op, v):
        md = self.md(v)
        name, src = self.where(op)
        backing = _attr_str(op, "tlx.backing")
        spec = backing or _attr_str(op, "tlx.spec")
        name = self._unique(_attr_str(op, "tlx.name") or backing or name or f"alloc{len(self.allocs)}", src)
        alloc = Alloc(op, md, name, src, _attr_str(self.func, "sym_name") or "", spec)
        self.allocs.append(alloc)
        view = self._view(alloc, op, md, 0, True, "alloc", name=alloc.name, src=src)
        view.backing = _attr_str(op, "tlx.backing") is not None
        return Ref(view, None, 0, md, md.size)

    def _view(self, alloc, op, md, offset, exact, origin, name=None, src=None, whole=None, pitch=None):
        key = (id(alloc), offset, md.text, exact, pitch, _attr_str(op, "tlx.view"), _attr_str(op, "tlx.alloc"))
        if key in self._views:
            self._views[key].makers.append(op)
            return self._views[key]
        n, s = self.where(op)
        view = View(alloc, md, offset, name or n or f"{alloc.name}.{origin}{len(alloc.views)}", src or s,
                    exact, origin=origin, whole_extent=whole, pitch=pitch)
        if "tlx.view" in op.attributes:
            tv = op.attributes["tlx.view"]
            try:
                view.tlx = ViewLayout.from_fields(from_attr(tv))
            except (KeyError, ValueError, TypeError):
                view.unreadable = f"tlx.view {tv} (a dictionary of offset, stride, group, num, slot, base, optionally " \
                    "width, and the radices and strides arrays expected)"
        view.alloc_id = _attr_str(op, "tlx.alloc")
        view.makers.append(op)
        view.no_tree = "tlx.no_reuse_tree" in op.attributes
        alloc.views.append(view)
        self._views[key] = view
        return view

    def _sub(self, ref: Ref, op, md, rel, extent, exact=True, box=None, borrow=False):
        name, src = self.where(op)
        key = (id(ref.site), op, str(rel), id(ref.sub))
        if key not in self._subs:
            borrow = borrow or (ref.sub is not None and ref.sub.borrow)
            sub = Sub(ref.view, ref.site, rel, extent, name or f"{ref.view.name}[i].{op.name.split('.')[-1]}", src,
                      md, exact and ref.exact, ref.sub, box, borrow, block=op.block, op=op)
            ref.view.alloc.subs.append(sub)
            self._subs[key] = sub
        sub = self._subs[key]
        return Ref(ref.view, ref.site, rel, md, extent, exact and ref.exact, sub, box)

    def _site(self, ref: Ref, op, md, top: bool):
        key = (op, ref.key(), top)
        if key not in self._sites:
            self._sites[key] = self._new_site(ref, op, md, top)
        return self._sites[key]

    def _new_site(self, ref: Ref, op, md, top: bool):
        idx_v, enc = op.operands[1], self.enc
        name, src = self.where(op)
        logical = text = rewrite = leaf = None
        ltext = ""
        if top and ref.view.tlx:
            logical, ltext, leaf = self._logical(idx_v, name)
            if leaf is not None:
                x = int_var(LOGICAL_X, enc.ctx)
                rewrite = self._rewrite_term(idx_v, leaf, x)
        if rewrite is not None:  # the IR's index is rewrite(user's index): no need to encode it twice
            index, text = substitute(rewrite, x, logical), ltext
        else:
            index = enc.val(idx_v)
            if index is None:
                index = enc._opaque(idx_v, "index", False)
            text = self._named_text(idx_v, name)
        cond = enc.path_condition(op)
        pred = self._use_predicate(op)
        if pred is not None:
            cond = _and(cond, pred)
        # a declared buffer by its name: the op's own name is the statement's target (`last = a.index(i).load()`)
        site = Site(ref.view, op, index, ref.md.shape[0], src,
                    (ref.view.tlx and ref.view.name) or name or ref.view.name, top, cond,
                    text, logical, ltext, rewrite, pred is not None, leaf if logical is not None else None)
        ref.view.sites.append(site)
        self.sites.append(site)
        return site

    def _use_predicate(self, op):
        """When every use of the selected buffer is an op that runs only under its `pred` operand (an
        mbarrier arrive/expect/wait, a TMA copy), the disjunction of those predicates; else None. A buffer
        selected with an out-of-range index but only touched when the predicate is false is never accessed."""
        preds = []
        for use in op.results[0].uses:
            user = getattr(use.owner, "operation", use.owner)
            if user.name not in ttg.PREDICATED_OPS:
                return None
            pred = ttg.pred_operand(user)
            term = self.enc.val(pred) if pred is not None else None
            if term is None:
                return None
            preds.append(term)
        return _or(*preds) if preds else None

    def _named_text(self, v, statement=None) -> str:
        """`i = iv@12 % 2`: the value's source name (if any) and its expression; not the name of the `statement`
        that uses it (`last = a.index((it - 1) % 2).load()`: Triton names the index `last` too)."""
        text = self.enc.text(v)
        name, _ = loc_info(v.location, self.path)
        return f"{name} = {text}" if name and name != statement and name != text and not text.startswith(
            name + " ") else text

    def _logical(self, idx_v, statement=None):
        """(term, text, value) of the user's index under the tlx.index_rewrite ops; (None, "", None) if
        it cannot be recovered."""
        owner = getattr(idx_v.owner, "operation", idx_v.owner)
        if not isinstance(idx_v, ir.BlockArgument) and "tlx.logical_index" in owner.attributes:
            c = ir.IntegerAttr(owner.attributes["tlx.logical_index"]).value   # a folded constant index
            return num(c, self.enc.ctx), str(c), None
        leaves = []
        _rewrite_leaves(idx_v, leaves)
        uniq = []
        for leaf in leaves:
            if leaf not in uniq:
                uniq.append(leaf)
        if len(uniq) == 1:  # (no rewrite ops at all: the index is used as the logical index)
            return self.enc.val(uniq[0]), self._named_text(uniq[0], statement), uniq[0]
        return None, "", None  # folded to a constant, or several untagged inputs

    def _rewrite_term(self, v, leaf, x, depth=0):
        """The tagged rewrite ops between `leaf` and `v` as a Z3 term with `leaf` replaced by x."""
        if v == leaf:
            return x
        if depth > 16 or isinstance(v, ir.BlockArgument):
            return None
        op = getattr(v.owner, "operation", v.owner)
        if "tlx.index_rewrite" not in op.attributes:
            return self.enc.val(v)
        if op.name == "arith.constant":
            return self.enc.val(v)
        args = [self._rewrite_term(a, leaf, x, depth + 1) for a in op.operands]
        if op.name not in INT_OPS or any(a is None for a in args):
            return None
        try:
            return INT_OPS[op.name](self.enc, op, args, _width(v))
        except (z3.Z3Exception, KeyError, TypeError):
            return None


def _rewrite_leaves(v, out, depth=0):
    """Untagged values feeding the `tlx.index_rewrite` ops above v (the user's logical index)."""
    if depth > 16:
        return
    if isinstance(v, ir.BlockArgument):
        out.append(v)
        return
    op = getattr(v.owner, "operation", v.owner)
    if "tlx.index_rewrite" not in op.attributes:
        out.append(v)
        return
    for a in op.operands:
        _rewrite_leaves(a, out, depth + 1)


# -- one handler per descriptor op: (builder, op, result value, source Ref, result MemDesc) -> [Ref]

def _reinterpret(b, op, v, src: Ref, md):
    if src.box is not None:   # the bytes of an inner-dim slice are not contiguous: where would this start?
        b.untrack(f"a reinterpret of {src.md.short()}, a slice along an inner dimension, cannot be placed in "
                  "memory by this checker", b.where(op)[1], [src])
        return []
    if src.site is None:
        view = b._view(src.view.alloc, op, md, src.view.offset, src.view.exact, "reinterpret",
                       whole=src.view.whole_extent)
        return [Ref(view, None, 0, md, md.size)]
    # the buffer of a view whose buffers are windows of its slots, back in the buffer's own type (the lowering
    # tags it with the view's tlx.alloc): the view's buffer itself, not another tenant of its bytes
    own = bool(src.view.tlx and src.view.tlx.width and src.view.alloc_id
               and _attr_str(op, "tlx.alloc") == src.view.alloc_id)
    return [b._sub(src, op, md, src.rel, md.size, borrow=not own)]


def _index(b, op, v, src: Ref, md):
    if src.site is None:  # selects a buffer of the view (its whole footprint when not tracked exactly)
        site = b._site(src, op, md, top=True)
        view = src.view
        if view.root is not None:   # a buffer of an inner-dim slice: a box of the root view's buffer
            root = view.root
            ref = Ref(root, site, 0, root.md, root.md.buffer_units)
            return [b._sub(ref, op, md, 0, root.md.buffer_units, False, view.box)]
        return [Ref(view, site, 0, md, md.size if view.exact else view.size, view.exact)]
    site = b._site(src, op, md, top=False)
    rel = src.rel + site.index * src.md.buffer_units
    return [b._sub(src, op, md, rel, md.size)]


def _shifted(b, op, src: Ref, md, off):
    """A descriptor `off` units past the start of `src` (its bytes contiguous)."""
    if src.site is None:
        view = b._view(src.view.alloc, op, md, src.view.offset + off, src.view.exact, "slice",
                       whole=src.view.whole_extent)
        view.backing = src.view.backing   # rows of a spec's backing (a row window): still no user's view
        return [Ref(view, None, 0, md, md.size)]
    return [b._sub(src, op, md, src.rel + off, md.size)]


def _boxed(b, op, src: Ref, md, offs):
    """An inner-dim slice: its elements are the box `offs` + shape of the source's, not one byte range.
    Footprint: inside the source (P1 holds when the box is inside the source's shape); two boxes of one
    source are compared element-wise (P8). A multi-buffer source keeps its buffers (dim 0 not cut)."""
    if src.box is not None:
        anchor, base, _ = src.box
        offs = [x + y for x, y in zip(base, offs)] if len(base) == len(offs) else None
    else:
        anchor = ("buffer", id(src.view), str(src.rel), src.extent)
    box = (anchor, tuple(offs), tuple(md.shape)) if offs is not None else None
    if src.site is None:
        multi = (src.view.exact and src.view.root is None and len(src.md.shape) >= 3 and offs is not None
                 and offs[0] == 0 and md.shape[0] == src.md.shape[0])
        if multi:   # each buffer keeps its place; inside it, a box
            view = b._view(src.view.alloc, op, md, src.view.offset, False, "slice", whole=src.md.buffer_units,
                           pitch=src.md.buffer_units)
            view.root = src.view
            view.box = (("buffer", id(src.view), "0", src.md.buffer_units), tuple(offs[1:]), tuple(md.shape[1:]))
        else:
            view = b._view(src.view.alloc, op, md, src.view.offset, False, "slice", whole=src.view.extent)
        return [Ref(view, None, 0, md, view.extent, False, None, box if not multi else None)]
    return [b._sub(src, op, md, src.rel, src.extent, False, box)]


def _slow_to_fast(md) -> list | None:
    """Dims of a SMEM descriptor from the slowest-varying in memory to the fastest, when each row of every
    dim is one contiguous byte range (None: the layout interleaves, e.g. an NVMMA tile wider than its swizzle)."""
    rank = len(md.shape)
    lead = list(range(rank - 2)) if rank >= 2 else []
    if rank == 1:
        return [0]
    inner = [rank - 2, rank - 1]
    if "nvmma_shared" in md.encoding:
        if "transposed = true" in md.encoding:
            inner = inner[::-1]
        m = re.search(r"swizzlingByteWidth\s*=\s*(\d+)", md.encoding)
        width = int(m.group(1)) if m else 0
        row_bytes = md.shape[inner[1]] * md.bits // 8
        return lead + inner if 0 < width and row_bytes <= width else lead + [None]
    m = re.search(r"order\s*=\s*\[([\d,\s]*)\]", md.encoding)
    if not m:
        return lead + [None]
    order = [int(x) for x in m.group(1).split(",")]          # fastest first, over the encoding's dims
    if len(order) == 1 and rank == 2:   # a rank-1 layout under a pipelining dim 0 (a spec's [G, P] backing)
        return [0, 1]
    return lead + [rank - 2 + d for d in reversed(order[-2:])] if len(order) >= 2 else lead + [None]


def _memdesc_subslice(b, op, v, src: Ref, md):
    """Exact when the slice is one contiguous byte range of each buffer (cut along the slowest dim that
    is not whole); otherwise a box of elements (see _boxed)."""
    offs = _attr_ints(op, "offsets") or []
    shape, sshape = list(md.shape), list(src.md.shape)
    if len(offs) != len(sshape) or len(shape) != len(sshape):
        b.untrack(f"ttg.memdesc_subslice {offs} of {src.md.short()}: the slice cannot be read", b.where(op)[1], [src])
        return []
    if any(o < 0 or o + n > m for o, n, m in zip(offs, shape, sshape)):
        bad = (src, b.where(op)[1], md, offs)
        if all(bad[1:] != x[1:] or bad[0].key() != x[0].key() for x in b.bad):
            b.bad.append(bad)
        return []
    cut = [d for d in range(len(sshape)) if offs[d] != 0 or shape[d] != sshape[d]]
    if not cut:
        return _shifted(b, op, src, md, 0)
    order = _slow_to_fast(src.md)
    if order and None not in order[: len(order)]:
        pos = {d: k for k, d in enumerate(order)}
        slowest = min(cut, key=pos.get)
        faster_whole = all(pos[d] <= pos[slowest] or d not in cut for d in range(len(sshape)))
        # contiguous: one cut dim, every faster dim whole, every slower dim of extent 1 in the slice
        if len(cut) == 1 and faster_whole and all(shape[d] == 1 for d in range(len(sshape)) if pos[d] < pos[slowest]):
            return _shifted(b, op, src, md, _linear(src.md, order, offs))
        # a multi-buffer view cut along the slowest dim of each buffer: per-buffer contiguous at a pitch
        if (src.site is None and len(sshape) >= 3 and cut == [slowest] and pos[slowest] == 1 and offs[0] == 0
                and shape[0] == sshape[0]):
            off = _linear(src.md, order, offs)
            view = b._view(src.view.alloc, op, md, src.view.offset + off, src.view.exact, "slice",
                           pitch=src.md.buffer_units)
            return [Ref(view, None, 0, md, view.extent)]
    return _boxed(b, op, src, md, offs)


def _linear(md, order, offs) -> int:
    """Units from the start of md to element `offs` for a layout laid out dim by dim in `order`."""
    step, out = md.bits / 8, 0
    for d in reversed(order):
        out += offs[d] * step
        step *= md.shape[d]
    return int(out)


def _tmem_subslice(b, op, v, src: Ref, md):
    """Columns [N, N + width) of the source: `N` (Triton 3.6-3.8) or `offset` along `dim` 1 (3.9)."""
    n = _attr_int(op, "N")
    if n is None and (_attr_int(op, "dim") or 1) == 1:
        n = _attr_int(op, "offset")
    off = None if n is None else n * src.md.cols_per_element()
    if off is None or off != int(off):
        b.untrack(f"ttng.tmem_subslice of {src.md.short()} ({op.attributes}) cannot be placed in columns",
                  b.where(op)[1], [src])
        return []
    return _shifted(b, op, src, md, int(off))


def _same_bytes(b, op, v, src: Ref, md):
    """Transpose / reshape: same footprint; dim 0 keeps meaning buffers only if it stays in front."""
    order = _attr_ints(op, "order")
    keeps_dim0 = order is None or not order or order[0] == 0
    if src.site is None:
        view = b._view(src.view.alloc, op, md, src.view.offset, src.view.exact and keeps_dim0, "view",
                       whole=src.view.extent)
        return [Ref(view, None, 0, md, md.size)]
    return [b._sub(src, op, md, src.rel, src.extent, keeps_dim0)]


DESC_OPS = {
    "ttg.memdesc_reinterpret": _reinterpret,
    "ttg.memdesc_index": _index,
    "ttg.memdesc_subslice": _memdesc_subslice,
    "ttng.tmem_subslice": _tmem_subslice,
    "ttg.memdesc_trans": _same_bytes,
    "ttg.memdesc_reshape": _same_bytes,
}


def build(module, aliases=None, path=None, ctx=None) -> list[Kernel]:
    """One `Kernel` per `tt.func` of the module."""
    ctx = ctx or z3.Context()
    out = []
    for op in module.body.operations:
        op = getattr(op, "operation", op)
        if op.name == "tt.func" and wellformed.has_body(op):   # a declaration holds no memory
            out.append(ModelBuilder(op, aliases, path, ctx).build())
    return out
