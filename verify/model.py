"""Recover the memory model of a lowered module: allocations, their views, and every buffer index.

Read from the upstream bindings (generic form, Triton ops unregistered), one function per kernel:

- `Alloc`: a `ttg.local_alloc` (SMEM, bytes) or `ttng.tmem_alloc` (TMEM, 32-bit columns x 128 lanes).
- `View`: a descriptor of an allocation before any buffer is selected — the allocation itself, or a
  `ttg.memdesc_reinterpret` / subslice / transpose / reshape of it, at a static offset. Its dim 0 counts
  buffers. TLX views (Contract 2) carry `tlx.view` (offset, stride, group, num, slot) and `tlx.alloc`.
- `Site`: a `ttg.memdesc_index` with its index as a Z3 term, the bound it must respect, and (for TLX
  views) the logical index recovered from under the `tlx.index_rewrite` ops.
- `Sub`: a descriptor derived from one selected buffer (reinterpret, slice, nested index): must stay inside it.

Index expressions are Z3 terms from `encode.Encoder`. Descriptor ops are handled by one function each
in `DESC_OPS` (keyed by op name); a descriptor op not in the table is reported in the notes, and what it
derives is not checked.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import z3

from tlx_alias import ttg
from tlx_alias._mlir import ir

from .encode import INT_OPS, Encoder, _attr_int, _attr_ints, _attr_str, _width, loc_info
from tlx_alias.memdesc import SMEM, TMEM, MemDesc, parse_memdesc

ALLOC_OPS = {"ttg.local_alloc": SMEM, "ttng.tmem_alloc": TMEM}


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

@dataclass
class TlxView:
    """`tlx.view = "offset=..,stride=..,group=K,num=N,slot=..[,radices=[K1..],strides=[U1..]]"` (units of
    the storage: bytes or columns). radices/strides describe nested group sizes (mixed radix, outermost
    first); without them a group of K > 1 is the one digit (K, slot)."""
    offset: int
    stride: int
    group: int
    num: int
    slot: int
    radices: tuple = ()
    strides: tuple = ()

    @staticmethod
    def parse(text: str) -> "TlxView":
        kv = dict(re.findall(r"(\w+)\s*=\s*(\[[^\]]*\]|[^,]*)", text))
        nums = [int(kv[k]) for k in ("offset", "stride", "group", "num", "slot")]
        lists = [tuple(int(x) for x in re.findall(r"-?\d+", kv.get(k, ""))) for k in ("radices", "strides")]
        if "radices" not in kv and nums[2] > 1:
            lists = [(nums[2],), (nums[4],)]
        return TlxView(*nums, *lists)

    def phys(self, i):
        """The slot a logical index lands in: `(i floordiv K) * (stride/slot) + offset/slot + digits`, the
        digits (innermost first) `(rest mod K_m) * (U_m/slot)`, `rest floordiv K_m` — for one group size K,
        `(i floordiv K) * (stride/slot) + offset/slot + (i mod K)`. `i`: a Z3 Int or a Python int."""
        div = (lambda a, b: a // b) if isinstance(i, int) else (lambda a, b: a / b)
        out, rest = div(i, self.group) * (self.stride // self.slot) + self.offset // self.slot, i
        for k, u in reversed(list(zip(self.radices, self.strides))):
            out = out + (rest % k) * (u // self.slot)
            rest = div(rest, k)
        return out


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
    tlx: TlxView | None = None
    alloc_id: str | None = None      # tlx.alloc
    no_tree: bool = False            # tlx.no_reuse_tree: its spec had no set_buffer_overlap
    backing: bool = False            # the Contract-2 backing allocation itself (not a user view)
    whole_extent: int | None = None  # footprint when not exact
    sites: list = field(default_factory=list)
    origin: str = ""                 # how it was made: "alloc", "reinterpret", ...

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
        """Units of one (logical) buffer."""
        if not self.exact:
            return self.whole_extent
        return self.md.buffer_units if (self.indexed or self.tlx) else self.md.size

    @property
    def extent(self) -> int:
        return self.whole_extent if not self.exact else self.md.size

    def lo(self, i):
        """Start (units, inside the allocation) of logical buffer i: a Z3 term for a Z3 i, an int for an int."""
        if not self.exact:
            return self.offset + 0 * i
        if self.tlx:
            return self.offset + self.tlx.phys(i) * self.md.buffer_units
        return self.offset + i * self.size


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


@dataclass
class Ref:
    """What a descriptor SSA value denotes: a view (site None) or a part of one selected buffer."""
    view: View
    site: Site | None
    rel: object
    md: MemDesc
    extent: int
    exact: bool = True

    def key(self):
        return (id(self.view), id(self.site), str(self.rel), self.md.text)


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


class ModelBuilder:
    def __init__(self, func_op, aliases, path, ctx):
        self.func = func_op
        self.aliases = aliases or {}
        self.path = path
        self.enc = Encoder(ctx, path)
        self.allocs: list[Alloc] = []
        self.sites: list[Site] = []
        self.notes: list[str] = []
        self.trees: dict = {}
        self.memo: dict = {}
        self._views: dict = {}
        self._subs: set = set()
        self._types: dict = {}

    # -- entry
    def build(self) -> Kernel:
        self.enc.prepare(self.func)
        ops = []
        self.func.walk(lambda op: (ops.append(op), ir.WalkResult.ADVANCE)[1], ir.WalkOrder.PRE_ORDER)
        for op in ops:
            op = getattr(op, "operation", op)
            for attr in ("tlx.overlap",):
                text = _attr_str(op, attr)
                if text:
                    spec = _attr_str(op, "tlx.spec") or _attr_str(op, "tlx.backing") or "?"
                    try:
                        self.trees.setdefault(spec, ReuseTree(json.loads(text)))
                    except (ValueError, AttributeError) as exc:
                        self.notes.append(f"unreadable tlx.overlap on {op.name}: {exc}")
            for res in op.results:
                if self.md(res) is not None:
                    self.refs(res)
        name = _attr_str(self.func, "sym_name") or "kernel"
        src = self.where(self.func)[1]
        return Kernel(name, src or f"kernel {name}", self.allocs, self.sites, self.notes, self.trees, self.enc)

    def md(self, value) -> MemDesc | None:
        text = str(value.type)
        if "memdesc<" not in text:
            return None
        if text not in self._types:
            self._types[text] = parse_memdesc(text, self.aliases)
        return self._types[text]

    def where(self, op):
        name, src = loc_info(op.location, self.path)
        return _attr_str(op, "tlx.name") or name, _attr_str(op, "tlx.src") or src

    # -- what a descriptor value denotes (list of alternatives), memoized
    def refs(self, v) -> list:
        if v in self.memo:
            return self.memo[v]
        self.memo[v] = []                       # cycle guard (loop-carried descriptors)
        out = self._refs(v)
        uniq, seen = [], set()
        for r in out:
            if r.key() not in seen:
                seen.add(r.key())
                uniq.append(r)
        self.memo[v] = uniq
        return uniq

    def _refs(self, v) -> list:
        if isinstance(v, ir.BlockArgument):
            block = v.owner
            parent = getattr(block.region.owner, "operation", block.region.owner)
            k = v.arg_number
            if parent.name == ttg.WS_PARTITIONS:
                return self.refs(ttg.capture_of(v))
            if parent.name == "scf.for" and k > 0:
                init = self.refs(parent.operands[3 + k - 1])
                self.memo[v] = init
                yielded = self.refs(list(block.operations)[-1].operands[k - 1])
                extra = [r for r in yielded if r.key() not in {i.key() for i in init}]
                if extra:
                    self.notes.append(f"a descriptor carried by the loop at {self.where(parent)[1]} changes "
                                      "between iterations; uses inside the loop were checked for its first value")
                return init + extra
            if parent.name == "tt.func":
                self.notes.append(f"a descriptor argument of function {_attr_str(parent, 'sym_name')} is not "
                                  "tracked: indices into it are not checked")
            return []  # scf.while arguments: not tracked
        op = getattr(v.owner, "operation", v.owner)
        name = op.name
        if name in ALLOC_OPS:
            return [self._new_alloc(op, v)]
        if name == "scf.for":
            k = v.result_number
            return self.refs(op.operands[3 + k]) + self.refs(
                list(op.regions[0].blocks[0].operations)[-1].operands[k])
        if name == "scf.if":
            out = []
            for region in op.regions:
                for blk in region.blocks:
                    out += self.refs(list(blk.operations)[-1].operands[v.result_number])
            return out
        srcs = self.refs(op.operands[0]) if len(op.operands) else []
        md = self.md(v)
        if md is None:
            return []
        handler = DESC_OPS.get(name)
        if handler is None:
            if srcs:
                self.notes.append(f"{name} at {self.where(op)[1] or '?'} makes a descriptor this checker does "
                                  "not model; its uses are not checked")
            return []
        return [r for src in srcs for r in handler(self, op, v, src, md) if r is not None]

    # -- records
    def _new_alloc(self, op, v):
        md = self.md(v)
        name, src = self.where(op)
        backing = _attr_str(op, "tlx.backing")
        spec = backing or _attr_str(op, "tlx.spec")
        name = _attr_str(op, "tlx.name") or backing or name
        alloc = Alloc(op, md, name or f"alloc{len(self.allocs)}", src,
                      _attr_str(self.func, "sym_name") or "", spec)
        self.allocs.append(alloc)
        view = self._view(alloc, op, md, 0, True, "alloc", name=alloc.name, src=src)
        view.backing = _attr_str(op, "tlx.backing") is not None
        return Ref(view, None, 0, md, md.size)

    def _view(self, alloc, op, md, offset, exact, origin, name=None, src=None, whole=None):
        key = (id(alloc), offset, md.text, exact, _attr_str(op, "tlx.view"), _attr_str(op, "tlx.alloc"))
        if key in self._views:
            return self._views[key]
        n, s = self.where(op)
        view = View(alloc, md, offset, name or n or f"{alloc.name}.{origin}{len(alloc.views)}", src or s,
                    exact, origin=origin, whole_extent=whole)
        tv = _attr_str(op, "tlx.view")
        if tv:
            try:
                view.tlx = TlxView.parse(tv)
            except (KeyError, ValueError):
                self.notes.append(f"unreadable tlx.view {tv!r} at {view.src}")
        view.alloc_id = _attr_str(op, "tlx.alloc")
        view.no_tree = "tlx.no_reuse_tree" in op.attributes
        alloc.views.append(view)
        self._views[key] = view
        return view

    def _sub(self, ref: Ref, op, md, rel, extent, exact=True):
        name, src = self.where(op)
        key = (id(ref.site), op, str(rel))
        if key not in self._subs:
            self._subs.add(key)
            ref.view.alloc.subs.append(Sub(ref.view, ref.site, rel, extent,
                                           name or f"{ref.view.name}[i].{op.name.split('.')[-1]}", src, md,
                                           exact and ref.exact))
        return Ref(ref.view, ref.site, rel, md, extent, exact and ref.exact)

    def _site(self, ref: Ref, op, md, top: bool):
        idx_v, enc = op.operands[1], self.enc
        name, src = self.where(op)
        logical = text = rewrite = None
        ltext = ""
        if top and ref.view.tlx:
            logical, ltext, leaf = self._logical(idx_v)
            if leaf is not None:
                x = z3.Int(LOGICAL_X, enc.ctx)
                rewrite = self._rewrite_term(idx_v, leaf, x)
        if rewrite is not None:  # the IR's index is rewrite(user's index): no need to encode it twice
            index, text = z3.substitute(rewrite, (x, logical)), ltext
        else:
            index = enc.val(idx_v)
            if index is None:
                index = enc._opaque(idx_v, "index", False)
            text = self._named_text(idx_v)
        site = Site(ref.view, op, index, ref.md.shape[0], src, name or ref.view.name, top, enc.path_condition(op),
                    text, logical, ltext, rewrite)
        ref.view.sites.append(site)
        self.sites.append(site)
        return site

    def _named_text(self, v) -> str:
        """`i = iv@12 % 2`: the value's source name (if any) and its expression."""
        text = self.enc.text(v)
        name, _ = loc_info(v.location, self.path)
        return f"{name} = {text}" if name and name != text and not text.startswith(name + " ") else text

    def _logical(self, idx_v):
        """(term, text, value) of the user's index under the tlx.index_rewrite ops; (None, "", None) if
        it cannot be recovered."""
        owner = getattr(idx_v.owner, "operation", idx_v.owner)
        if not isinstance(idx_v, ir.BlockArgument) and "tlx.logical_index" in owner.attributes:
            c = ir.IntegerAttr(owner.attributes["tlx.logical_index"]).value   # a folded constant index
            return z3.IntVal(c, self.enc.ctx), str(c), None
        leaves = []
        _rewrite_leaves(idx_v, leaves)
        uniq = []
        for leaf in leaves:
            if leaf not in uniq:
                uniq.append(leaf)
        if len(uniq) == 1:  # (no rewrite ops at all: the index is used as the logical index)
            return self.enc.val(uniq[0]), self._named_text(uniq[0]), uniq[0]
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
    if src.site is None:
        view = b._view(src.view.alloc, op, md, src.view.offset, src.view.exact, "reinterpret",
                       whole=src.view.whole_extent)
        return [Ref(view, None, 0, md, md.size)]
    return [b._sub(src, op, md, src.rel, md.size)]


def _index(b, op, v, src: Ref, md):
    if src.site is None:  # selects a buffer of the view (its whole footprint when not tracked exactly)
        site = b._site(src, op, md, top=True)
        exact = src.view.exact
        return [Ref(src.view, site, 0, md, md.size if exact else src.view.extent, exact)]
    site = b._site(src, op, md, top=False)
    rel = src.rel + site.index * src.md.buffer_units
    return [b._sub(src, op, md, rel, md.size)]


def _shifted(b, op, src: Ref, md, off, exact):
    """A descriptor at `off` units past `src` (exact) or somewhere inside it (not exact)."""
    if src.site is None:
        if exact:
            view = b._view(src.view.alloc, op, md, src.view.offset + off, src.view.exact, "slice",
                           whole=src.view.whole_extent)
        else:
            view = b._view(src.view.alloc, op, md, src.view.offset, False, "slice", whole=src.view.extent)
        return [Ref(view, None, 0, md, md.size if exact else src.extent)]
    return [b._sub(src, op, md, src.rel + off if exact else src.rel, md.size if exact else src.extent, exact)]


def _dim0_outermost(md) -> bool:
    """Is dim 0 the slowest-varying dimension in memory (so rows of dim 0 are contiguous byte ranges)?"""
    if len(md.shape) >= 3:      # multi-buffer dims sit outside the 2-D shared layout
        return True
    if "nvmma_shared" in md.encoding:
        return "transposed = true" not in md.encoding
    m = re.search(r"order\s*=\s*\[([\d,\s]*)\]", md.encoding)
    return bool(m) and [int(x) for x in m.group(1).split(",")][-1] == 0


def _memdesc_subslice(b, op, v, src: Ref, md):
    """Exact when it cuts along an outermost dim 0 only; otherwise somewhere inside the source."""
    offs = _attr_ints(op, "offsets") or []
    if offs and all(o == 0 for o in offs):
        return _shifted(b, op, src, md, 0, True)
    if offs and all(o == 0 for o in offs[1:]) and len(src.md.shape) >= 2 and _dim0_outermost(src.md):
        return _shifted(b, op, src, md, offs[0] * src.md.buffer_units, True)
    return _shifted(b, op, src, md, 0, False)


def _tmem_subslice(b, op, v, src: Ref, md):
    """Columns [N, N + width) of the source: `N` (Triton 3.6-3.8) or `offset` along `dim` 1 (3.9)."""
    n = _attr_int(op, "N")
    if n is None and (_attr_int(op, "dim") or 1) == 1:
        n = _attr_int(op, "offset")
    if n is None:  # a row slice, or an attribute this model does not know: somewhere inside the source
        return _shifted(b, op, src, md, 0, False)
    off = n * src.md.cols_per_element()
    if off != int(off):
        return _shifted(b, op, src, md, 0, False)
    return _shifted(b, op, src, md, int(off), True)


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
        if op.name == "tt.func":
            out.append(ModelBuilder(op, aliases, path, ctx).build())
    return out
