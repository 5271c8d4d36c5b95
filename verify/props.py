"""The safety properties, one function each, proven with Z3 over the model of `model.py`.

P1 every view, buffer and derived descriptor lies inside its allocation (or its buffer);
P2 `A[i]` and `A[j]` are disjoint for i != j;
P3 for two views of one allocation, `A[i]` and `B[j]` are disjoint when i and j are different stages;
P4 `distinct` siblings of a reuse tree are disjoint at every index;
P5 every runtime buffer index is provably in [0, num) (TLX: the user's index, and the rewrite matches tlx.view);
P6 capacity: SMEM within the target's per-block limit, TMEM within 512 columns.

Each property function lists its checks (`Check`: constraints whose model is a counterexample, and how
to explain one) per allocation (`Batch`); `settle` asks the solver once for all checks of the kernel and
only goes batch by batch, then check by check, when that finds something: a safe kernel costs one call.
Indices are Z3 variables over their whole range (no enumeration); TLX slots follow the rewrite
`(i floordiv K) * (stride/slot) + offset/slot + (i mod K)`. Stages for P3: buffer i of a TLX view
(`tlx.view`) belongs to logical group `i floordiv K`; two hand-aliased views are compared in lock step
(buffer j of a view with r times as many buffers belongs to stage j floordiv r: the legacy `reuse=`
convention, and `_borrow_s_as_p`'s); a view nobody indexes (used whole, like an epilogue tile borrowing
a dead ring) and views whose buffer counts do not divide have no stage correspondence: P3 is not
applicable there and says so. P4 needs the reuse tree (`tlx.overlap` on a view or the backing).

P5 policy: an index that can leave [0, num) for some values of the kernel's arguments, program ids and
loop counters is a violation (with those values); one that depends on something the checker only
approximates (an op it does not model, a value carried by a loop beyond its proven invariants) is
"cannot prove": a warning, an error only under TLX_ALIAS_PROOF=strict / --strict. An index that is out of
range on every execution reaching it is a violation either way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from tlx_alias.memdesc import SMEM, TMEM
from tlx_alias import targets

from . import execute
from .encode import (RLIMIT_KERNEL, RLIMIT_PROPERTY, _and, _attr_str, _implies, _nary, _or, add, free_vars, ge, gt,
                     int_var, lt, mul, num)
from .model import LOGICAL_X, Z3_OPS

PROVEN, VIOLATION, UNKNOWN, NA = "proven", "violation", "cannot prove", "n/a"
RANK = {VIOLATION: 3, UNKNOWN: 2, PROVEN: 1, NA: 0}

# Per-block dynamic shared memory (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), which Triton
# compares `metadata.shared` against when it loads a kernel (triton/compiler/compiler.py, `max_shared_mem`).

FIX = {
    "P1": "make the view fit: shrink its shape or dtype, or enlarge the allocation (TLX: buffer_size_bytes)",
    "P2": "give each buffer of the view its own bytes: the per-index stride must be at least one buffer",
    "P3": "select the alias per buffer (`.index(i)` first, then `_reinterpret` / `slice`, as the Gluon "
          "attention tutorial's `_borrow_s_as_p` does), or size the views so that buffer i of one lies "
          "inside buffer i of the other",
    "P4": "members of a `distinct` group must not share memory: enlarge the spec or move the member into a "
          "`shared` group",
    "P5": "keep the index in [0, num): wrap it (`% num`) or reset the ring counter at num",
    "P6": "use fewer buffers or smaller tiles",
    "P8": "give each part of a buffer its own columns/bytes (slice at disjoint offsets), or derive the smaller "
          "view from the larger one if it is meant to reuse its memory",
    "P3-tlx": "declare which views may share memory with `spec.set_buffer_overlap(reuse_group(...))`, or give "
              "the views of a spec without a tree equal buffer sizes, so that buffer i of one covers only "
              "buffer i of the others",
    "untracked": "keep descriptors inside one kernel function and use the ops the checker models "
                 "(index, slice, reinterpret, permute, reshape); or relax with TLX_ALIAS_PROOF=warn",
}


@dataclass
class Verdict:
    prop: str
    alloc: str
    status: str
    check: str                       # what was checked
    detail: str = ""                 # counterexample or reason
    src: str = ""                    # the kernel line to point at
    fix: str = ""
    query: str = ""                  # SMT-LIB text of the query when the solver failed
    data: dict = field(default_factory=dict)

    def as_dict(self):
        return {k: v for k, v in self.__dict__.items() if v not in ("", {}, None)}


class Query:
    """One solver per kernel: facts at the base level, each check between push and pop."""

    def __init__(self, enc, rlimit=None, budget=None):
        self.enc = enc
        self.rlimit = rlimit or RLIMIT_PROPERTY  # resource units, deterministic (unlike a timeout)
        self.budget = budget or RLIMIT_KERNEL    # all checks of the kernel: a proof never hangs a compile
        self.spent = 0
        self.calls = 0
        # buffer indices of the layout checks; dotted names never clash with kernel names (Python identifiers)
        self.i, self.j = int_var("buffer.i", enc.ctx), int_var("buffer.j", enc.ctx)
        self._lo = {}
        self.lemmas = {}

    def lo(self, view, var):
        """Start of buffer `var` of `view`, for checks that constrain var to [0, num) (P1-P4 all do): there a
        declared layout whose slots are a progression is that linear term, as in `phys`, not the mixed-radix
        formula's floor division and modulo, which the solver branches on (memoized: building Z3 terms costs
        more than solving here)."""
        key = (id(view), var.get_id())
        if key not in self._lo:
            affine = view.tlx.affine() if view.tlx and view.exact and view.pitch is None else None
            if affine is None:
                t = view.lo(var)
            else:
                unit = view.md.buffer_units
                t = add(view.offset + view.in_slot + affine[1] * unit, mul(var, affine[0] * unit))
            self._lo[key] = t if z3.is_expr(t) else num(t, self.enc.ctx)
        return self._lo[key]

    def in_range(self, var, n) -> tuple:
        """(var >= 0, var < n): every layout check starts with its indices in range."""
        key = ("range", var.get_id(), n)   # (the terms hold var: its id stays its own)
        if key not in self._lo:
            self._lo[key] = (ge(var, 0), lt(var, n))
        return self._lo[key]

    def inner(self, kernel):
        """Nested indices assumed in range (P5 checks them) when checking what is derived from a buffer."""
        if "inner" not in self._lo:
            self._lo["inner"] = [_implies(s.cond, _and(*self.in_range(s.index, s.bound)))
                                 for s in kernel.sites if not s.top]
        return self._lo["inner"]

    def slots_of(self, view, limit=1 << 16):
        """{slot: logical index} of a TLX view (for indices the lowering folded to constants), or None."""
        if view.tlx.num > limit:
            return None
        key = ("slots", id(view))
        if key not in self._lo:
            self._lo[key] = {view.tlx.slot_of(i): i for i in range(view.tlx.num)}
        return self._lo[key]

    def phys(self, view, var):
        """The slot tlx.view declares for buffer `var`, for checks that constrain var to [0, num): there a
        layout whose slots are a progression (`ViewLayout.affine`, found by evaluating the formula at every
        index) is that linear term, which the solver compares with the lowering's `d * i + c` at once instead
        of reasoning about floor division and modulo (22 ms -> 3 ms for P5 of hopper_gemm_ws)."""
        key = ("phys", id(view), var.get_id())
        if key not in self._lo:
            affine = view.tlx.affine()
            self._lo[key] = (add(mul(var, affine[0]), affine[1]) if affine is not None
                             else view.tlx.slot_of(var, Z3_OPS))
        return self._lo[key]

    def find(self, *constraints):
        """('sat', model) | ('unsat', None) | ('unknown', SMT-LIB text of the query). The default solver
        answers what the linear one gives up on; the budget counts both."""
        for k in (0, 1):
            s = self.enc.solver(k)  # (asserts facts added since: encoding a counterexample may add some)
            left = self.budget - self.spent
            if left <= 0:
                return "unknown", f"; the proof budget of this kernel ({self.budget} Z3 resource units) is used up"
            self.calls += 1
            self.enc.limit(k, min(self.rlimit, left))
            before = self._count(s)
            s.push()
            try:
                s.add(list(constraints))
                r = s.check()
                self.spent += self._count(s) - before
                if r == z3.sat:
                    return "sat", s.model()
                if r == z3.unsat:
                    return "unsat", None
                answer = "unknown", f"; z3: {s.reason_unknown()}\n" + s.sexpr()
            except z3.Z3Exception as exc:
                answer = "unknown", f"; z3 error: {exc}\n" + s.sexpr()
            finally:
                s.pop()
        return answer

    @staticmethod
    def _count(s) -> int:
        """Z3's resource counter (cumulative over the context). Looked up from the end: it sits among the
        last few of ~1,000 statistics, and `Statistics.get_key_value` scanning them all from the front
        took a third of the proof time of upstream's attention example."""
        st = s.statistics()
        ref = st.ctx.ref()
        for k in reversed(range(len(st))):
            if z3.Z3_stats_get_key(ref, st.stats, k) == "rlimit count":
                return z3.Z3_stats_get_uint_value(ref, st.stats, k)
        return 0   # no check has run in this context yet


@dataclass
class Check:
    """One proof obligation: `cons` satisfiable means a counterexample, `explain(model)` turns it into
    a Verdict (violation or cannot prove)."""
    what: str
    cons: list
    explain: object
    src: str = ""


@dataclass
class Batch:
    """The checks of one property for one allocation, to be settled together (see `settle`)."""
    prop: str
    alloc: object
    checks: list


def _any(checks, q):
    ctx = q.enc.ctx
    true = z3.BoolVal(True, ctx)
    conj = [_nary(z3.Z3_mk_and, c.cons, ctx) if c.cons else true for c in checks]
    return q.find(_nary(z3.Z3_mk_or, conj, ctx))[0]


def settle(items, q: Query) -> list:
    """Verdicts for a list of Verdicts and Batches: one solver call per property for every check of the kernel
    (one call for all properties at once made a query 2-5x slower to refute than its parts); only where that
    finds something, one per batch, and within a failing batch one per check."""
    batches = [b for b in items if isinstance(b, Batch) and b.checks]
    proven = {prop for prop in dict.fromkeys(b.prop for b in batches)
              if _any([c for b in batches if b.prop == prop for c in b.checks], q) == "unsat"}
    out = []
    for item in items:
        if not isinstance(item, Batch):
            out.append(item)
        elif item.prop in proven or (len(item.checks) > 1 and _any(item.checks, q) == "unsat"):
            out += [Verdict(item.prop, item.alloc.name, PROVEN, c.what) for c in item.checks]
        else:
            out += [_one(item.prop, item.alloc, c, q) for c in item.checks]
    return out


def _one(prop, alloc, c, q):
    res, m = q.find(*c.cons)
    if res == "unsat":
        return Verdict(prop, alloc.name, PROVEN, c.what)
    if res == "unknown":
        if "proof budget" in m.splitlines()[0]:
            return Verdict(prop, alloc.name, UNKNOWN, c.what, m.splitlines()[0].lstrip("; "), c.src)
        return Verdict(prop, alloc.name, UNKNOWN, c.what, "the solver gave no answer (query below)", c.src, query=m)
    return c.explain(m)


def _ev(model, term) -> int | None:
    v = model.eval(term, model_completion=True)
    return v.as_long() if z3.is_int_value(v) else None


def _overlap(a_lo, a_hi, b_lo, b_hi):
    return _and(lt(a_lo, b_hi), lt(b_lo, a_hi))


def _rng(lo, hi, unit):
    return f"{unit} [{lo}, {hi})"


def _user_views(alloc):
    return [v for v in alloc.views if not v.backing]


# ---------------------------------------------------------------------------------------------- P1

def untracked_of(kernel, alloc) -> list:
    """The untracked descriptors (model.Untracked) that may reach this allocation."""
    return [u for u in kernel.untracked
            if u.alloc is alloc or (u.alloc is None and u.space in (None, alloc.space))]


def _untracked_verdicts(prop, kernel, alloc, what) -> list:
    return [Verdict(prop, alloc.name, UNKNOWN, what, f"{u.reason} ({u.src or '?'}): accesses through it are not "
                    "modelled", u.src, FIX["untracked"]) for u in untracked_of(kernel, alloc)]


def p1_inside(kernel, alloc, q: Query) -> list:
    out, checks, unit, i = [], [], alloc.unit, q.i
    out += _untracked_verdicts("P1", kernel, alloc, f"every access to {alloc.name} is inside it")
    for src, op_src, md, offs in [x for x in kernel.bad if x[0].view.alloc is alloc]:
        out.append(Verdict("P1", alloc.name, VIOLATION, f"slice {md.short()} at {offs} inside {src.md.short()}",
                           f"the slice {md.short()} at offsets {offs} ({op_src}) does not lie inside its source "
                           f"{src.md.short()} ({src.view.name} at {src.view.src})", op_src, FIX["P1"]))
    for v in _user_views(alloc):
        what = f"{v.name} ({v.md.short()}) inside {alloc.name} ({alloc.size} {unit})"
        if v.offset < 0 or v.offset + v.extent > alloc.size:
            out.append(Verdict("P1", alloc.name, VIOLATION, what,
                               f"{v.name} spans {_rng(v.offset, v.offset + v.extent, unit)} but {alloc.name} "
                               f"has {alloc.size} {unit} (view at {v.src}, allocation at {alloc.src})",
                               v.src, FIX["P1"]))
            continue
        if v.unreadable:
            out.append(Verdict("P1", alloc.name, UNKNOWN, what, f"{v.name}'s declared layout is unreadable: "
                               f"{v.unreadable} ({v.src})", v.src,
                               "tlx.view must be the dictionary the lowering writes: lower the kernel again "
                               "with this tlx-alias"))
            continue
        if v.tlx:
            bad = _tlx_consistency(v, unit)
            if bad:
                out.append(Verdict("P1", alloc.name, VIOLATION, what, "; ".join(bad) + f" ({v.src})", v.src,
                                   "the lowering must emit a tlx.view consistent with the view's type"))
                continue
        if v.slot_accessed_at:
            out.append(Verdict("P1", alloc.name, VIOLATION, what,
                               f"an op at {v.slot_accessed_at} accesses a whole {v.md.buffer_units}-{unit} slot of "
                               f"{v.name}, whose buffers are {v.size} {unit} at {v.in_slot} in their slot ({v.src})",
                               v.slot_accessed_at, "select the buffer in its slot (`ttng.tmem_subslice` at its "
                               "columns) before accessing it: the rest of the slot is other buffers'"))
            continue
        if v.num <= 0:
            continue
        lo, slots = q.lo(v, i), v.rank_buffers
        escape = [lt(lo, 0), gt(add(lo, v.size), alloc.size)]
        if v.tlx:
            phys = q.phys(v, i)
            escape += [lt(phys, 0), ge(phys, slots)]

        def explain(m, v=v, lo=lo, slots=slots):
            iv, start = _ev(m, i), _ev(m, lo)
            extra = f", slot {_ev(m, q.phys(v, i))} of {slots}" if v.tlx else ""
            return Verdict("P1", alloc.name, VIOLATION if v.exact else UNKNOWN, what,
                           f"{v.name}[{iv}] spans {_rng(start, start + v.size, unit)}{extra}, outside "
                           f"{alloc.name} ({alloc.size} {unit}; view at {v.src})", v.src, FIX["P1"],
                           data={"view": v.name, "index": iv, "range": [start, start + v.size]})
        checks.append(Check(what, [*q.in_range(i, v.num), _nary(z3.Z3_mk_or, escape, q.enc.ctx)], explain, v.src))
    # descriptors derived from one buffer (reinterpret / slice / nested index after `.index(i)`), assuming
    # the nested indices in range (P5 checks those)
    inner = q.inner(kernel)
    for sub in alloc.subs:
        v = sub.view
        what = f"{sub.name} ({sub.md.short()}) inside one buffer of {v.name} ({v.size} {unit})"
        rel = sub.rel if z3.is_expr(sub.rel) else num(sub.rel, q.enc.ctx)
        at = v.in_slot if sub.site.top and sub.site.view is v else 0   # rel counts from the slot's start
        escape = [sub.site.cond, *inner,
                  _nary(z3.Z3_mk_or, [lt(rel, at), gt(add(rel, sub.extent), at + v.size)], q.enc.ctx)]

        def explain(m, sub=sub, v=v, rel=rel, what=what, escape=escape, at=at):
            site = sub.site
            of = "its buffer"
            if site.top and site.view is v:   # which buffer, and where that puts the view in the allocation
                base = v.slot_lo(site.index)   # (the formula itself: the IR's index may be out of range here)
                res, out = q.find(*escape, _or(base + rel < 0, base + rel + sub.extent > alloc.size))
                m = out if res == "sat" else m   # an index at which it leaves the allocation, if there is one
                idx, base = _ev(m, site.index), _ev(m, base)
                of = f"{v.name}[{idx}]"
            start = _ev(m, rel) - at
            where = "into the next buffer" if start >= 0 else "into the previous buffer"
            if of != "its buffer":
                lo, hi = base + at + start, base + at + start + sub.extent
                if lo < 0 or hi > alloc.size:
                    where = (f"{_rng(lo, hi, unit)} of {alloc.name}, "
                             f"{'before its start' if lo < 0 else 'past its end'} ({alloc.size} {unit})")
                else:
                    where += f" ({_rng(lo, hi, unit)} of {alloc.name})"
            return Verdict("P1", alloc.name, VIOLATION if sub.exact else UNKNOWN, what,
                           f"{sub.name} spans {_rng(start, start + sub.extent, unit)} of {of}, but a buffer "
                           f"of {v.name} has {v.size} {unit}: it reaches {where} "
                           f"({sub.name} at {sub.src}, {v.name} at {v.src})", sub.src, FIX["P1"])
        checks.append(Check(what, escape, explain, sub.src))
    return out + [Batch("P1", alloc, checks)]


def _tlx_consistency(v, unit) -> list:
    t, bad = v.tlx, []
    if t.slot != v.md.buffer_units:
        buf = "x".join(map(str, v.md.shape[1:])) + "x" + v.md.elem
        bad.append(f"tlx.view slot={t.slot} but one {buf} buffer of the view is {v.md.buffer_units} {unit}")
    stride_used = t.num > t.group          # a view whose buffers all sit in index group 0 never uses the stride
    at, width = t.buffer if t.slot > 0 else (0, t.slot)   # a buffer narrower than its slot: at offset mod slot
    if (t.slot <= 0 or t.group <= 0 or (stride_used and t.stride % t.slot) or (t.offset - at) % t.slot
            or any(u % t.slot for u in t.strides)):
        bad.append(f"offset {t.offset} and stride {t.stride} must be multiples of slot {t.slot}"
                   + (f" (the offset less the buffer's {at} {unit} in its slot)" if t.width else ""))
    if t.width < 0 or (t.width and at + width > t.slot):
        bad.append(f"a buffer of {t.width} {unit} at {at} {unit} into its slot does not fit the slot's {t.slot} {unit}")
    if t.base % t.slot or t.base != v.offset:
        bad.append(f"tlx.view base={t.base} but the view starts {v.offset} {unit} into {v.alloc.name} "
                   f"(the base must be where it starts, a multiple of slot {t.slot})")
    return bad


# ---------------------------------------------------------------------------------------------- P2

def p2_self(kernel, alloc, q: Query) -> list:
    out, checks, unit, i, j = [], [], alloc.unit, q.i, q.j
    for v in _user_views(alloc):
        what = f"{v.name}[i] / {v.name}[j] disjoint for i != j ({v.num} buffers)"
        if v.num <= 1:
            out.append(Verdict("P2", alloc.name, PROVEN, what))
            continue
        li, lj = q.lo(v, i), q.lo(v, j)

        def explain(m, v=v, li=li, lj=lj, what=what):
            a, b, la, lb = _ev(m, i), _ev(m, j), _ev(m, li), _ev(m, lj)
            reason = "" if v.exact else " (footprint over-approximated: this view is not tracked exactly)"
            return Verdict("P2", alloc.name, VIOLATION if v.exact else UNKNOWN, what,
                           f"{v.name}[{a}] {_rng(la, la + v.size, unit)} overlaps {v.name}[{b}] "
                           f"{_rng(lb, lb + v.size, unit)} ({v.src}){reason}", v.src, FIX["P2"],
                           data={"views": [v.name, v.name], "indices": [a, b]})
        checks.append(Check(what, [*q.in_range(i, v.num), *q.in_range(j, v.num), i != j,
                                   _overlap(li, add(li, v.size), lj, add(lj, v.size))], explain, v.src))
    return out + [Batch("P2", alloc, checks)]


# ---------------------------------------------------------------------------------------------- P3 / P4

def reuse_relation(kernel, alloc, a, b):
    """(kind, src) of the lowest reuse group holding both TLX views, or (None, None)."""
    tree = kernel.tree.get(alloc.spec) if alloc.spec else None
    if tree is None and len(kernel.tree) == 1:
        tree = next(iter(kernel.tree.values()))
    if tree is not None and a.tlx and b.tlx and a.alloc_id and b.alloc_id:
        return tree.relation(a.alloc_id, b.alloc_id)
    return None, None


def _stages(kernel, alloc, a, b, i, j):
    """(stage of a[i], stage of b[j], description) or (None, None, reason P3 does not apply)."""
    if a.tlx and b.tlx and not (a.no_tree and b.no_tree):
        kind, _ = reuse_relation(kernel, alloc, a, b)
        how = f"reuse tree: {kind}" if kind else "reuse tree"
        return i / a.tlx.group, j / b.tlx.group, f"logical groups i floordiv K ({how})"
    # A spec without a reuse tree places every view at offset 0 with its natural stride: the user declared
    # that buffer i of each view shares memory with buffer i of the others (TLX's tree-less spec, the legacy
    # `reuse=`), which is how hand-aliased views relate too: in lock step.
    if not a.indexed and not a.tlx:
        return None, None, (f"{a.name} is used whole (never indexed): it aliases every buffer of {b.name} by "
                            "construction, there are no stages to tell apart (ordering in time is not checked)")
    if not b.indexed and not b.tlx:
        return None, None, (f"{b.name} is used whole (never indexed): it aliases every buffer of {a.name} by "
                            "construction, there are no stages to tell apart (ordering in time is not checked)")
    na, nb = a.num, b.num
    if na != nb and na % nb == 0:
        return i / (na // nb), j, f"{a.name}[i] belongs to stage i floordiv {na // nb}"
    if na != nb and nb % na == 0:
        return i, j / (nb // na), f"{b.name}[j] belongs to stage j floordiv {nb // na}"
    return i, j, "same index"


def _used(view, var, ctx):
    """`var` is one of the constant indices the view is used at (logical indices for TLX views), or None
    when some use selects a runtime index, or the view is also used as a whole: then every buffer counts.
    (Runtime indices of two uses share the kernel's variables although they run at different times, so
    they are not used to restrict the pair.)"""
    if view.used_whole or not view.sites:
        return None
    values = set()
    for s in view.sites:
        if not s.top:
            continue
        term = s.logical if view.tlx else s.index
        if term is None or not z3.is_int_value(term):
            return None
        values.add(term.as_long())
    return _nary(z3.Z3_mk_or, [var == c for c in sorted(values)], ctx) if values else None


def _pairs(alloc):
    views = _user_views(alloc)
    return [(views[x], views[y]) for x in range(len(views)) for y in range(x + 1, len(views))]


def p3_cross(kernel, alloc, q: Query) -> list:
    out = _untracked_verdicts("P3", kernel, alloc, f"accesses to {alloc.name} do not overlap live buffers")
    if len(_user_views(alloc)) < 2:
        return out + [Verdict("P3", alloc.name, NA, "two views disjoint across stages",
                              "one view of this allocation: nothing else aliases it at the allocation level")]
    checks, i, j, ctx = [], q.i, q.j, q.enc.ctx
    for a, b in _pairs(alloc):
        sa, sb, how = _stages(kernel, alloc, a, b, i, j)
        what = f"{a.name}[i] / {b.name}[j] disjoint across stages"
        if sa is None:
            out.append(Verdict("P3", alloc.name, NA, what, how))
            continue
        # only index pairs the kernel can select (a view used at one index meets one buffer of the other)
        used = [u for u in (_used(a, i, ctx), _used(b, j, ctx)) if u is not None]
        treeless = a.no_tree and b.no_tree
        fix = FIX["P3-tlx"] if treeless else FIX["P3"]
        checks.append(_pair_check("P3", alloc, a, b, q, f"{what} ({how})", _and(sa != sb, *used),
                                  "different stages", fix=fix))
    return out + [Batch("P3", alloc, checks)]


def p4_distinct(kernel, alloc, q: Query) -> list:
    checks, i, j = [], q.i, q.j
    for a, b in _pairs(alloc):
        kind, src = reuse_relation(kernel, alloc, a, b)
        if kind == "distinct":
            what = f"{a.name} / {b.name} distinct siblings ({src}) disjoint at every index"
            checks.append(_pair_check("P4", alloc, a, b, q, what, i / a.tlx.group == j / b.tlx.group,
                                      "the same group", src))
    if not checks:
        return [Verdict("P4", alloc.name, NA, "distinct siblings disjoint",
                        "no `distinct` reuse group declared for this allocation")]
    return [Batch("P4", alloc, checks)]


def _pair_check(prop, alloc, a, b, q, what, when_cons, when, src="", fix=None):
    i, j, unit = q.i, q.j, alloc.unit
    la, lb = q.lo(a, i), q.lo(b, j)

    def explain(m):
        ii, jj, sa, sb = _ev(m, i), _ev(m, j), _ev(m, la), _ev(m, lb)
        uses = "; ".join(f"{s.name} indexed at {s.src}" for s in (a.sites[:1] + b.sites[:1]))
        detail = (f"{a.name}[{ii}] {_rng(sa, sa + a.size, unit)} ({a.src}) overlaps {b.name}[{jj}] "
                  f"{_rng(sb, sb + b.size, unit)} ({b.src}) although they are {when}"
                  + (f"; {uses}" if uses else "") + (f"; group declared at {src}" if src else ""))
        exact = a.exact and b.exact
        if not exact:
            detail += " (a footprint is over-approximated: not tracked exactly)"
        return Verdict(prop, alloc.name, VIOLATION if exact else UNKNOWN, what, detail, b.src or a.src, fix or FIX[prop],
                       data={"views": [a.name, b.name], "indices": [ii, jj],
                             "ranges": [[sa, sa + a.size], [sb, sb + b.size]]})
    return Check(what, [*q.in_range(i, a.num), *q.in_range(j, b.num), when_cons,
                        _overlap(la, add(la, a.size), lb, add(lb, b.size))], explain, b.src or a.src)


# ---------------------------------------------------------------------------------------------- P8

def _box_overlap(a, b) -> bool:
    return all(oa < ob + nb and ob < oa + na for oa, na, ob, nb in zip(a[1], a[2], b[1], b[2]))


def _related(a, b) -> bool:
    """One derived from the other, or from a view equal to the other (same box, or same exact range)."""
    def same(x, y):   # the same borrow made again elsewhere (a helper called in two partitions)
        if x is y:
            return True
        if x.src != y.src or x.block == y.block:   # two borrows made side by side are two tenants
            return False
        if x.box is not None or y.box is not None:
            return x.box is not None and y.box is not None and x.box == y.box
        return x.exact and y.exact and str(x.rel) == str(y.rel) and x.extent == y.extent
    return any(same(x, b) for x in [a] + a.ancestors()) or any(same(a, y) for y in b.ancestors())


def p8_borrows(kernel, alloc, q: Query) -> list:
    """Borrows of one buffer (descriptors with a reinterpret on their way from it: the attention tutorial's
    P, alpha, l, m borrowed from S) that are read or written through are equal, derived one from the other,
    or disjoint: two borrows that
    partly overlap hold two live values in one place (an alpha column inside P, l on m's column). Plain
    slices of the buffer (same type: S read in halves) are the buffer's own value and may lie under a
    borrow, as S lies under the P computed from it."""
    subs = [s for s in alloc.subs if s.site is not None and s.borrow and s.accessed]
    checks, out, ctx, unit = [], [], q.enc.ctx, alloc.unit
    inner = q.inner(kernel)
    for x in range(len(subs)):
        for y in range(x + 1, len(subs)):
            a, b = subs[x], subs[y]
            if a.view is not b.view or _related(a, b):
                continue
            what = f"{a.name} / {b.name}: borrows of one {a.view.name} buffer disjoint or nested"
            same_buffer = [a.site.cond, b.site.cond, a.site.index == b.site.index, *inner]
            if a.box is not None and b.box is not None and a.box[0] == b.box[0]:
                if not _box_overlap(a.box, b.box):
                    continue

                def explain(m, a=a, b=b, what=what):
                    return Verdict("P8", alloc.name, VIOLATION, what,
                                   f"{a.name} (elements {list(a.box[1])} + {list(a.box[2])}, {a.src}) overlaps "
                                   f"{b.name} (elements {list(b.box[1])} + {list(b.box[2])}, {b.src}) in "
                                   f"{a.view.name}[{_ev(m, a.site.index)}], and neither is derived from the other",
                                   b.src, FIX["P8"])
                checks.append(Check(what, same_buffer, explain, b.src))
                continue
            ra = a.rel if z3.is_expr(a.rel) else num(a.rel, ctx)
            rb = b.rel if z3.is_expr(b.rel) else num(b.rel, ctx)
            cons = same_buffer + [_overlap(ra, add(ra, a.extent), rb, add(rb, b.extent))]

            def explain(m, a=a, b=b, ra=ra, rb=rb, what=what):
                sa, sb = _ev(m, ra), _ev(m, rb)
                exact = a.exact and b.exact
                return Verdict("P8", alloc.name, VIOLATION if exact else UNKNOWN, what,
                               f"{a.name} {_rng(sa, sa + a.extent, unit)} ({a.src}) overlaps {b.name} "
                               f"{_rng(sb, sb + b.extent, unit)} ({b.src}) of {a.view.name}"
                               f"[{_ev(m, a.site.index)}], and neither is derived from the other"
                               + ("" if exact else " (a footprint is only bounded: a slice along an inner dimension)"),
                               b.src, FIX["P8"], data={"views": [a.name, b.name],
                                                       "ranges": [[sa, sa + a.extent], [sb, sb + b.extent]]})
            checks.append(Check(what, cons, explain, b.src))
    if not checks and not out:
        return [Verdict("P8", alloc.name, NA if len(subs) < 2 else PROVEN,
                        "borrows of one buffer disjoint or nested",
                        "fewer than two borrows (reinterprets) of one buffer" if len(subs) < 2 else "")]
    return out + [Batch("P8", alloc, checks)]


# ---------------------------------------------------------------------------------------------- P5

def p5_index(kernel, alloc, q: Query) -> list:
    """Every index site: its index (TLX: the user's index) in range; TLX: the rewrite equals the layout's."""
    sites = [s for v in alloc.views for s in v.sites]
    if not sites:
        return [Verdict("P5", alloc.name, NA, "runtime indices in range", "nothing indexes this allocation")]
    checks, lemmas, ctx = [], [], q.enc.ctx
    for s in sites:
        tlx = s.view.tlx if s.top else None
        if tlx is not None and s.logical is not None:
            term, n, text, kind = s.logical, tlx.num, s.logical_text, "logical index"
        else:
            term, n, text, kind = s.index, s.bound, s.text, "index"
        what = f"{s.name}: {kind} {text} in [0, {n}) at {s.src}"
        checks.append(Check(what, [s.cond, _nary(z3.Z3_mk_or, [lt(term, 0), ge(term, n)], ctx)],
                            lambda m, s=s, term=term, n=n, text=text, kind=kind, what=what:
                            _p5_range(kernel, alloc, q, s, term, n, text, kind, what, m), s.src))
        if tlx is not None:
            check = _p5_rewrite(s, tlx, q, what)
            if isinstance(check, Verdict):
                checks.append(Check(check.check, [z3.BoolVal(check.status != PROVEN, ctx)],
                                    lambda m, v=check: v, s.src))
            elif all(check is not c for c in lemmas):  # one lemma per view and rewrite, however many sites
                lemmas.append(check)
    return [Batch("P5", alloc, checks + lemmas)]


def _p5_range(kernel, alloc, q, s, term, n, text, kind, what, m):
    """The verdict for an index found out of range in model m (see the module doc for the policy)."""
    enc = kernel.enc
    value = _ev(m, term)
    ctx_vals = _model_text(m, [term], enc)
    detail = f"{kind} {text} = {value} at {s.src} (must be in [0, {n}))" + (f" with {ctx_vals}" if ctx_vals else "")
    data = {"index": value, "bound": n}
    approx = _approx(enc, [term, s.cond])
    if not approx:
        return Verdict("P5", alloc.name, VIOLATION, what, detail, s.src, FIX["P5"], data=data)
    always, _ = q.find(s.cond, term >= 0, term < n)
    if always == "unsat":
        return Verdict("P5", alloc.name, VIOLATION, what,
                       detail + "; it is out of range on every execution that reaches it", s.src, FIX["P5"], data=data)
    run = _witness(kernel, q, s, m, term is not s.index) if term is s.index or term is s.logical else None
    if run is not None:
        args, seen, value = run
        return Verdict("P5", alloc.name, VIOLATION, what,
                       f"{kind} {text} = {value} at {s.src} (must be in [0, {n})) on a run with {args}: "
                       f"{execute.describe(seen, {})}", s.src, FIX["P5"],
                       data={"index": value, "bound": n, "run": args})
    why = "; ".join(sorted({enc.why[a] for a in approx}))
    return Verdict("P5", alloc.name, UNKNOWN, what,
                   detail + f"; depends on values this checker only approximates: {why}", s.src, FIX["P5"], data=data)


def _p5_rewrite(s, tlx, q, what):
    """TLX: the physical index the IR computes is the declared rewrite of the user's index.

    The IR's index is R(user's index); R is proven equal to the declared formula once per view and rewrite,
    over a fresh x in [0, num) (a Check named after the rewrite), unless the index cannot be split so
    (then a Check on this site's own terms, or a Verdict when the user's index is not recoverable)."""
    alloc, ctx = s.view.alloc, q.enc.ctx
    layout = f"group={tlx.group}, stride={tlx.stride}, offset={tlx.offset}"
    if s.logical is None:  # the lowering folded the index (a constant), or it cannot be split
        c = s.index.as_long() if z3.is_int_value(s.index) else None
        check = what + f"; the IR's slot is one of tlx.view's ({layout})"
        slots = q.slots_of(s.view) if c is not None else None
        if slots is not None and c in slots:
            return Verdict("P5", alloc.name, PROVEN, check + f" (slot {c} = logical {slots[c]})")
        return Verdict("P5", alloc.name, VIOLATION if slots is not None else UNKNOWN, check,
                       f"physical index {s.text} at {s.src} is not the slot of any logical index in "
                       f"[0, {tlx.num})" + ("" if slots is not None else " (the user's index could not be recovered)"),
                       s.src, FIX["P5"])
    if s.rewrite is not None:
        key = (id(s.view), s.rewrite.get_id())  # Z3 shares identical terms: one lemma per view and rewrite
        if key in q.lemmas:
            return q.lemmas[key]
        logical, index = int_var(LOGICAL_X, ctx), s.rewrite
        cons = [*q.in_range(logical, tlx.num), index != q.phys(s.view, logical)]
        check = f"{s.view.name}: the IR's index rewrite is tlx.view's ({layout}) for every logical index"
    else:
        key, logical, index = None, s.logical, s.index
        cons = [s.cond, *q.in_range(logical, tlx.num), index != q.phys(s.view, logical)]
        check = what + f"; the rewrite matches tlx.view ({layout})"
    who = s.logical_text.split(" = ")[0] if " = " in s.logical_text else s.logical_text

    def explain(m):
        li, pi = _ev(m, logical), _ev(m, index)
        return Verdict("P5", alloc.name, VIOLATION, check,
                       f"for {who} = {li} the IR selects slot {pi} of {s.view.name}, the declared layout "
                       f"slot {_ev(m, tlx.slot_of(logical, Z3_OPS))} (index at {s.src})", s.src,
                       "the index rewrite must be (i floordiv K) * (stride/slot) + offset/slot + (i mod K)",
                       data={"logical": li, "slot": pi})
    out = Check(check, cons, explain, s.src)
    if key is not None:
        q.lemmas[key] = out
    return out


WITNESS_ARGS = (0, 16, 17, 18, 19, 64, 256)   # every integer argument at once, one run per value


def _witness(kernel, q, s, m, logical=False):
    """(kernel arguments, Seen, index) of a bounded concrete run on which site s's index (`logical`: the user's
    index of a TLX view, in [0, num)) leaves [0, bound):
    arguments from the counterexample, then 0 (loops of no step), 16 to 19 (every remainder modulo 2, 3 and 4,
    the usual ring depths: 16, 64 and 256 alone all leave 1 modulo 3), 64 and 256 (long loops), program 0 of 1."""
    if kernel.func is None or _attr_str(kernel.func, "sym_visibility") == "private":
        return None   # a noinline helper: its arguments are what its callers pass, which no run here follows
    runs = q._lo.setdefault(("runs", kernel.name), {})
    args_v = list(kernel.func.regions[0].blocks[0].arguments)
    from_model = {}
    for k, a in enumerate(args_v):
        t = kernel.enc.memo.get(a)
        if t is not None and z3.is_int(t):
            from_model[k] = _ev(m, t)
    # the counterexample's program along axis 0 (a persistent program that got no tile: pid >= its tiles)
    pids, nprogs = kernel.enc.program_vars()["x"]   # (execute.Run sets axis 0's program only)
    pid, nprog = (_ev(m, vs[0]) if vs else v for vs, v in ((pids, 0), (nprogs, 1)))
    program = (pid, max(nprog, pid + 1))
    tries = ([(from_model, program)] if program != (0, 1) else []) + [(from_model, (0, 1))] + [
        ({k: v for k in from_model}, (0, 1)) for v in WITNESS_ARGS]
    watch = {x.op: [x.op.operands[1]] + ([x.logical_value] if x.logical_value is not None else [])
             for x in kernel.sites}
    index, bound = (s.logical_value, s.view.tlx.num) if logical else (s.op.operands[1], s.bound)
    for args, (p, n) in tries:
        key = (tuple(sorted(args.items())), p, n)
        if key not in runs:
            runs[key] = execute.Run(kernel.func, args, p, n, watch=watch, path=kernel.enc.path).go(kernel.func)
        for seen in runs[key].seen.get(s.op, []):
            value = seen.values.get(index)
            touched = not s.predicated or any(p is True for p in seen.preds)
            if value is not None and not 0 <= value < bound and touched:
                names = {k: execute.loc_info(args_v[k].location, kernel.enc.path)[0] or f"arg{k}" for k in args}
                text = ", ".join(f"{names[k]} = {v}" for k, v in sorted(args.items())) or "no integer arguments"
                return text + f", program {p} of {n}", seen, value
    return None


def _model_text(m, terms, enc):
    """`n_iter = 4, iv@100 = 3 (induction variable of the loop at f.py:100)` for the variables of terms."""
    out = []
    for var in sorted({str(v): v for t in terms for v in free_vars(t)}.items()):
        name, term = var
        why = enc.why.get(name, "")
        out.append(f"{name} = {m.eval(term, model_completion=True)}" + (f" ({why})" if why else ""))
    return ", ".join(out)


def _approx(enc, terms):
    return [n for t in terms for n in sorted(enc.var_names(t)) if enc.kind.get(n) == "approx"]


# ---------------------------------------------------------------------------------------------- P6

def tmem_granule(cols: int) -> int:
    """Columns Triton's TMEM allocator reserves for an allocation: next power of two, at least 32."""
    n = 32
    while n < cols:
        n *= 2
    return n


def p6_capacity(kernel, capability: int | None) -> list:
    out = []
    limit = targets.smem_limit(capability)
    note = "" if capability in targets.SMEM_BYTES else f" (no figure for sm_{capability}: sm_90's used)"
    for space, cap, unit in ((SMEM, limit, "bytes"), (TMEM, targets.TMEM_COLUMNS, "cols")):
        allocs = [a for a in kernel.allocs if a.space == space]
        if not allocs:
            continue
        if space == TMEM and capability is not None and capability < 100:
            for a in allocs:
                out.append(Verdict("P6", a.name, VIOLATION, "tensor memory exists on this target",
                                   f"sm_{capability} has no tensor memory ({a.src})", a.src,
                                   "TMEM needs sm_100 or later"))
            continue
        total = 0
        for a in allocs:
            size = tmem_granule(a.size) if space == TMEM else a.size
            total += size
            what = f"{a.name}: {size} of {cap} {unit}{note if space == SMEM else ''}"
            if size > cap:
                out.append(Verdict("P6", a.name, VIOLATION, what,
                                   f"{a.name} needs {size} {unit}, the target has {cap} ({a.src})", a.src, FIX["P6"],
                                   data={"size": size, "limit": cap}))
            else:
                out.append(Verdict("P6", a.name, PROVEN, what))
        if len(allocs) > 1:
            what = f"all {space.upper()} allocations of {kernel.name}: {total} of {cap} {unit}"
            if total > cap:
                out.append(Verdict("P6", "(all)", UNKNOWN, what,
                                   f"together they need {total} {unit} > {cap}; Triton's allocator may still fit "
                                   "them if their lifetimes do not overlap", kernel.src, FIX["P6"],
                                   data={"size": total, "limit": cap}))
            else:
                out.append(Verdict("P6", "(all)", PROVEN, what))
    return out


PER_ALLOC = (p1_inside, p2_self, p3_cross, p4_distinct, p5_index, p8_borrows)
