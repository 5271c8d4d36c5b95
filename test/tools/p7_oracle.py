"""An oracle for P7, independent of verify/temporal.py: every interleaving of a small unrolled model.

    python test/tools/p7_oracle.py FILE.ttgir [--args N,...]     # prints the hazards, or "safe"

Two steps, both written here from the PTX semantics, not from P7's code:

1. Unroll (`unroll`): the kernel's integer program runs once (program 0 of 1, every integer argument = N)
   and records, per thread (the kernel; each `warp_specialize` partition), the straight-line list of events
   that touch shared or tensor memory or synchronize: accesses with their allocation and unit range (bytes;
   TMEM: 32-bit columns), TMA loads / stores, wgmma and tcgen05 ops, mbarrier init / expect / arrive /
   wait(parity), the waits of the async groups. Control flow in these kernels depends only on integers each
   thread computes itself, so the list does not depend on the interleaving.

2. Explore (`explore`): a depth-first search over every interleaving of the threads' events AND every
   completion order of the async engines (a TMA load completes at any time after issue; a thread's TMA
   stores and its wgmma groups retire in order, any time after issue; a thread's tcgen05 pipe retires its
   MMAs and the arrivals of their `mbarriers=` / `tcgen05_commit` in issue order, but a new MMA is checked
   against the thread's MMAs still in flight except where PTX pipelines the pair: an MMA into the same
   accumulator (D's bytes and types), or its D write after an earlier MMA's A read), states memoized.
   Completions are explored only where they can be observed (just before a thread's next event on the
   barrier they signal, or its wait that needs them): delaying one only keeps accesses in flight longer and
   changes no barrier before that event, so this loses no hazard and no hang.
   A wait(parity) may return only when the barrier's completed-phase count has the other parity;
   `store_wait(n)` / `warpgroup_mma_wait(n)` only when at most n are outstanding. A **hazard** is an access
   that starts while another access to overlapping units of the same allocation, one of them a write, is in
   flight (an async op issued and not complete; a synchronous access of another thread enabled at the same
   state). Two accesses of one thread's tcgen05 pipe are ordered; other accesses of one thread are ordered
   only for synchronous ones. A state where every thread is blocked is a hang.

A hazard is "cross-view" when the two accesses go through different views (the allocation, a TLX view
`tlx.alloc`, a `memdesc_reinterpret`), "one-view" otherwise; it is "shared" when its allocation is a TLX
spec's backing or is accessed through two views in the unrolled kernel: the allocations P7 checks (a
one-view hazard of an allocation with one view and no spec is outside P7's scope).

Shared with P7 (on purpose; not the judgment): Triton's parser and the bridge to the upstream bindings
(`verify.source.load_triton`), memdesc sizes (`tlx_alias.memdesc`, proven by P1-P6's tests),
`tlx_alias.ttg` (where warp_specialize keeps its captures), and the modelling choices any reading of the
ISA needs: warps of one partition are one thread, a `memdesc_subslice` of whole dim-0 entries covers those
entries (a spec's row window) and any other covers its whole source, the phase and
parity rule of mbarriers. Not shared: the interpreter, the event model, the search (P7 runs one schedule
with vector clocks; this runs all of them and looks at what is in flight).
"""
from __future__ import annotations

import re
import sys
from collections import deque
from dataclasses import dataclass, field

from tlx_alias import ttg
from tlx_alias._mlir import terminator
from tlx_alias.memdesc import parse_memdesc

MAX_EVENTS = 3_000           # events per unrolled kernel (a "small" model: more is TooBig)
MAX_STATES = 200_000         # states explored per value (beyond: "incomplete")


class Unsupported(Exception):
    """The unrolled model cannot be built (an op or value this oracle does not handle)."""


class TooBig(Unsupported):
    """The unrolled model is not small (loops driven by these argument values run too long)."""


@dataclass(frozen=True)
class Foot:
    alloc: int                 # allocation number
    lo: int
    hi: int
    view: object               # view key: the allocation, a tlx.alloc id, or a reinterpret op
    name: str


@dataclass(frozen=True)
class Ev:
    kind: str                  # acc tma_ld tma_st st_wait wg wg_wait mma commit init arrive expect wait fork join
    src: str = ""              # file:line of the op
    op: str = ""               # op name
    reads: tuple = ()          # Foot...
    writes: tuple = ()
    bar: int = -1              # barrier number (arrive/expect/wait/tma_ld/commit/init)
    bars: tuple = ()           # tcgen05 mma: barriers it arrives on
    acc: tuple = ()            # tcgen05 mma: its accumulator (D's footprint, D's and A's types)
    n: int = 0                 # count / pendings / bytes / parity
    tids: tuple = ()           # fork / join


@dataclass(frozen=True)
class Hazard:
    first: tuple               # (op name, src, "read"/"write", view name)
    second: tuple
    alloc: str
    lo: int
    hi: int
    cross: bool                # through different views
    shared: bool = True        # its allocation is a spec's backing or accessed through two views (P7's scope)


@dataclass
class Verdict:
    hazards: set = field(default_factory=set)
    hang: bool = False
    states: int = 0
    complete: bool = True
    events: int = 0
    witness: dict = field(default_factory=dict)   # hazard -> the schedule that reaches it (lines of text)

    @property
    def unsafe(self) -> bool:
        return bool(self.hazards)

    @property
    def cross(self) -> list:
        return sorted((h for h in self.hazards if h.cross), key=str)

    @property
    def scoped(self) -> list:
        """The hazards P7's pairs cover: between two views, or within one view of a shared allocation."""
        return sorted((h for h in self.hazards if h.cross or h.shared), key=str)

    def summary(self) -> str:
        if self.hazards:
            h = (self.cross or sorted(self.hazards, key=str))[0]
            return (f"unsafe: {h.first[2]} {h.first[3]} by {h.first[0]} at {h.first[1]} while {h.second[2]} "
                    f"{h.second[3]} by {h.second[0]} at {h.second[1]} ({h.alloc} [{h.lo}, {h.hi}), "
                    f"{'cross-view' if h.cross else 'one view'})")
        return "hang" if self.hang else ("safe" if self.complete else "no hazard found (incomplete)")


# ------------------------------------------------------------------------------------------------ unroll

def _op(x):
    return getattr(x, "operation", x)


def _int_attr(op, name):
    try:
        text = str(op.attributes[name])
    except KeyError:
        return None
    m = re.match(r"\s*(-?\d+)", text)
    return int(m.group(1)) if m else None


def _src(op) -> str:
    m = re.search(r'"([^"]+)":(\d+)', str(op.location))
    return f"{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}" if m else "?"


def _width(v) -> int:
    m = re.fullmatch(r"i(\d+)", str(v.type))
    return int(m.group(1)) if m else 64


def _sdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_PRED = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b, 3: lambda a, b: a <= b,
         4: lambda a, b: a > b, 5: lambda a, b: a >= b}
INT = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.divsi": _sdiv, "arith.remsi": lambda a, b: a - b * _sdiv(a, b), "arith.divui": lambda a, b: a // b,
    "arith.remui": lambda a, b: a % b, "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: -((-a) // b), "arith.minsi": min, "arith.maxsi": max, "arith.minui": min,
    "arith.maxui": max, "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b, "arith.shli": lambda a, b: a << b, "arith.shrsi": lambda a, b: a >> b,
    "arith.shrui": lambda a, b: a >> b,
}
CAST = {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui", "arith.bitcast"}
IGNORED = {"ttng.fence_async_shared", "ttg.barrier", "gpu.barrier", "ttg.local_dealloc", "ttng.tmem_dealloc",
           "ttng.inval_barrier", "scf.yield", "scf.condition", "ttg.warp_yield", "ttg.warp_return", "tt.return"}
VIEW_OPS = {"ttg.memdesc_index", "ttg.memdesc_reinterpret", "ttg.memdesc_subslice", "ttng.tmem_subslice",
            "ttg.memdesc_trans", "ttg.memdesc_reshape"}


def _is_md(v) -> bool:
    return "memdesc<" in str(v.type)


def _is_bar(v) -> bool:
    return _is_md(v) and "xi64" in str(v.type)


class Unroll:
    """Runs the kernel's integer program and records each thread's events (see the module doc)."""

    def __init__(self, module, aliases, value):
        """`value`: every integer argument's, or {argument name: value} with None for the others (K apart
        from M and N)."""
        self.aliases, self.value = aliases, value
        self.env: dict = {}
        self.traces: list = []
        self.allocs: list = []         # names
        self.backings: set = set()     # numbers of the allocations that are a TLX spec's backing (`tlx.backing`)
        self.bars: dict = {}           # (alloc, lo) -> barrier number
        self.count = 0
        funcs = [_op(o) for o in module.body.operations if _op(o).name == "tt.func"]
        if len(funcs) != 1:
            raise Unsupported(f"{len(funcs)} functions")
        body = funcs[0].regions[0].blocks[0]
        for a in body.arguments:
            if re.fullmatch(r"i\d+|index", str(a.type)):
                self.env[a] = value.get(_arg_name(a), value[None]) if isinstance(value, dict) else value
        self.new_thread()
        self.block(0, body)

    def new_thread(self) -> int:
        self.traces.append([])
        return len(self.traces) - 1

    def emit(self, tid, ev):
        self.count += 1
        if self.count > MAX_EVENTS:
            raise TooBig(f"more than {MAX_EVENTS} events")
        self.traces[tid].append(ev)

    def get(self, v, op):
        try:
            return self.env[v]
        except KeyError:
            raise Unsupported(f"{op.name} at {_src(op)} needs a value the run cannot compute") from None

    def md(self, v):
        out = parse_memdesc(str(v.type), self.aliases)
        if out is None:
            raise Unsupported(f"cannot read the memdesc type {v.type}")
        return out

    def block(self, tid, block):
        for op in block.operations:
            self.op(tid, _op(op))

    def yielded(self, block):
        term = terminator(block)
        return [self.env.get(v) for v in term.operands]

    def bind(self, values, targets):
        for val, t in zip(values, targets):
            if val is not None:
                self.env[t] = val

    def pred(self, op):
        flags = [v for v in op.operands if str(v.type) == "i1"]
        return bool(self.get(flags[-1], op)) if flags else True

    def foot(self, v, op) -> Foot:
        f = self.env.get(v)
        if not isinstance(f, Foot):
            raise Unsupported(f"{op.name} at {_src(op)} uses a descriptor the run did not follow")
        return f

    def bar(self, v, op) -> int:
        f = self.foot(v, op)
        key = (f.alloc, f.lo)
        if key not in self.bars:
            self.bars[key] = len(self.bars)
        return self.bars[key]

    def op(self, tid, op):
        name = op.name
        if name == "arith.constant":
            text = str(op.attributes["value"]).split(":")[0].strip()
            if text in ("true", "false"):
                self.env[op.results[0]] = text == "true"
            elif re.fullmatch(r"-?\d+", text):
                self.env[op.results[0]] = int(text)
            return
        if name in INT or name in CAST or name in ("arith.cmpi", "arith.select"):
            try:
                args = [self.env[v] for v in op.operands]
            except KeyError:
                return                              # tensor arithmetic, or a loaded value: not needed
            if any(isinstance(a, Foot) for a in args[:1]):
                return
            if name in INT:
                out = INT[name](int(args[0]), int(args[1]))
                if name.endswith("ui") and out < 0:
                    out %= 1 << _width(op.operands[0])
            elif name in CAST:
                out = args[0]
            elif name == "arith.cmpi":
                pred = _int_attr(op, "predicate")
                if pred not in _PRED:
                    return
                out = _PRED[pred](args[0], args[1])
            else:
                out = args[1] if args[0] else args[2]
            self.env[op.results[0]] = out
            return
        if name == "tt.get_program_id":
            self.env[op.results[0]] = 0
            return
        if name == "tt.get_num_programs":
            self.env[op.results[0]] = 1
            return
        if name == "scf.for":
            lb, ub, step = (self.get(op.operands[k], op) for k in range(3))
            body = op.regions[0].blocks[0]
            state = [self.env.get(v) for v in list(op.operands)[3:]]
            iv = lb
            while iv < ub:
                self.bind([iv] + state, list(body.arguments))
                self.block(tid, body)
                state = self.yielded(body)
                iv += step
            self.bind(state, list(op.results))
            return
        if name == "scf.if":
            region = op.regions[0] if self.get(op.operands[0], op) else op.regions[1]
            if len(region.blocks):
                self.block(tid, region.blocks[0])
                self.bind(self.yielded(region.blocks[0]), list(op.results))
            return
        if name == "scf.while":
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            state = [self.env.get(v) for v in op.operands]
            for _ in range(MAX_EVENTS):
                self.bind(state, list(before.arguments))
                self.block(tid, before)
                cond = terminator(before)
                fwd = [self.env.get(v) for v in list(cond.operands)[1:]]
                if not self.get(cond.operands[0], cond):
                    self.bind(fwd, list(op.results))
                    return
                self.bind(fwd, list(after.arguments))
                self.block(tid, after)
                state = self.yielded(after)
            raise TooBig(f"the loop at {_src(op)} runs more than {MAX_EVENTS} iterations")
        if name == ttg.WS:
            parts = ttg.partitions_op(op)
            kids = []
            if parts is not None:
                caps = [self.env.get(v) for v in ttg.captures(op)]
                for region in parts.regions:
                    k = self.new_thread()
                    kids.append(k)
                    self.bind(caps, list(region.blocks[0].arguments))
                    self.block(k, region.blocks[0])
            self.emit(tid, Ev("fork", tids=tuple(kids)))
            self.block(tid, op.regions[0].blocks[0])
            self.emit(tid, Ev("join", tids=tuple(kids)))
            return
        if name in ("ttg.local_alloc", "ttng.tmem_alloc"):
            r = op.results[0]
            md = self.md(r)
            self.allocs.append(f"{_name(r)} ({_src(op)})")
            if _str_attr(op, "tlx.backing"):
                self.backings.add(len(self.allocs) - 1)
            f = Foot(len(self.allocs) - 1, 0, md.size, ("alloc", len(self.allocs) - 1), _name(r))
            self.env[r] = f
            if len(op.operands) and not _is_bar(r):
                self.emit(tid, Ev("acc", _src(op), name, writes=(f,)))
            return
        if name in VIEW_OPS:
            self.view(op)
            return
        if name in IGNORED:
            return
        if name == "ttng.init_barrier":
            self.emit(tid, Ev("init", _src(op), name, bar=self.bar(op.operands[0], op), n=_int_attr(op, "count") or 1))
            return
        if name in ("ttng.arrive_barrier", "ttng.barrier_expect", "ttng.wait_barrier", "ttng.tc_gen5_commit",
                    "ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global", "ttng.tmem_store"):
            if not self.pred(op):
                return
        if name == "ttng.arrive_barrier":
            self.emit(tid, Ev("arrive", _src(op), name, bar=self.bar(op.operands[0], op),
                              n=_int_attr(op, "count") or 1))
        elif name == "ttng.barrier_expect":
            self.emit(tid, Ev("expect", _src(op), name, bar=self.bar(op.operands[0], op), n=_int_attr(op, "size") or 0))
        elif name == "ttng.wait_barrier":
            self.emit(tid, Ev("wait", _src(op), name, bar=self.bar(op.operands[0], op),
                              n=self.get(op.operands[1], op) & 1))
        elif name == "ttng.tc_gen5_commit":
            self.emit(tid, Ev("commit", _src(op), name, bar=self.bar(op.operands[0], op)))
        elif name == "ttng.async_tma_copy_global_to_local":
            mds = [v for v in op.operands if _is_md(v)]
            dest = [v for v in mds if not _is_bar(v)]
            bars = [v for v in mds if _is_bar(v)]
            if len(dest) != 1 or len(bars) != 1:
                raise Unsupported(f"{name} at {_src(op)}: operands")
            self.emit(tid, Ev("tma_ld", _src(op), name, writes=(self.foot(dest[0], op),),
                              bar=self.bar(bars[0], op), n=self.md(dest[0]).size))
        elif name == "ttng.async_tma_copy_local_to_global":
            srcs = tuple(self.foot(v, op) for v in op.operands if _is_md(v))
            self.emit(tid, Ev("tma_st", _src(op), name, reads=srcs))
        elif name == "ttng.async_tma_store_wait":
            self.emit(tid, Ev("st_wait", _src(op), name, n=_int_attr(op, "pendings") or 0))
        elif name == "ttng.warp_group_dot":
            reads = tuple(self.foot(v, op) for v in op.operands if _is_md(v))
            is_async = "isAsync" in op.attributes and str(op.attributes["isAsync"]) == "true"
            self.emit(tid, Ev("wg" if is_async else "acc", _src(op), name, reads=reads))
        elif name == "ttng.warp_group_dot_wait":
            self.emit(tid, Ev("wg_wait", _src(op), name, n=_int_attr(op, "pendings") or 0))
        elif name == "ttng.tc_gen5_mma":
            self.mma(tid, op)
        elif name in ("ttg.local_load", "ttng.tmem_load", "ttg.local_store", "ttng.tmem_store"):
            fs = tuple(self.foot(v, op) for v in op.operands if _is_md(v))
            write = name.endswith("store")
            self.emit(tid, Ev("acc", _src(op), name, reads=() if write else fs, writes=fs if write else ()))
        elif any(_is_md(v) and isinstance(self.env.get(v), Foot) for v in op.operands):
            raise Unsupported(f"{name} at {_src(op)} touches memory and this oracle does not model it")

    def mma(self, tid, op):
        seg = re.findall(r"-?\d+", str(op.attributes["operandSegmentSizes"]).split(":", 1)[1])
        seg = [int(x) for x in seg]
        if len(seg) != 8:
            raise Unsupported(f"tc_gen5_mma at {_src(op)}: operand segments {seg}")
        ops = list(op.operands)
        at = [sum(seg[:k]) for k in range(8)]
        if seg[5] and not self.get(ops[at[5]], op):
            return
        reads = tuple(self.foot(ops[at[k]], op) for k in (0, 1) if _is_md(ops[at[k]]))
        writes = (self.foot(ops[at[2]], op),)
        bars = []
        for k in range(seg[6]):
            if seg[7] and not self.get(ops[at[7] + k], op):
                continue
            bars.append(self.bar(ops[at[6] + k], op))
        # asynchronous with or without barriers: Gluon lowers a barrier-less tcgen05_mma to a bare `tcgen05.mma`
        # (no commit, no wait in the PTX), whatever its `is_async` says
        d = writes[0]                # the accumulator's address: its bytes, whichever view names them
        acc = ((d.alloc, d.lo, d.hi), str(ops[at[2]].type), str(ops[at[0]].type))
        self.emit(tid, Ev("mma", _src(op), op.name, reads=reads, writes=writes, bars=tuple(bars), acc=acc))

    def view(self, op):
        src = self.env.get(op.operands[0])
        if not isinstance(src, Foot):
            return
        md = self.md(op.results[0])
        name = op.name
        if name == "ttg.memdesc_reinterpret":
            key = _str_attr(op, "tlx.alloc") or ("reinterpret", _src(op), str(op.results[0].type))
            label = _str_attr(op, "tlx.name") or _name(op.results[0])
            self.env[op.results[0]] = Foot(src.alloc, src.lo, src.lo + md.size, key, label)
        elif name == "ttg.memdesc_index":
            lo = src.lo + self.get(op.operands[1], op) * self.md(op.operands[0]).buffer_units
            self.env[op.results[0]] = Foot(src.alloc, lo, lo + md.size, src.view, src.name)
        elif name == "ttng.tmem_subslice":
            n = _int_attr(op, "N")
            if n is None:
                n = _int_attr(op, "offset")
            lo = src.lo + int(n * self.md(op.operands[0]).cols_per_element())
            self.env[op.results[0]] = Foot(src.alloc, lo, lo + md.size, src.view, src.name)
        elif name == "ttg.memdesc_subslice" and _dim0_rows(op, self.md(op.operands[0]), md) is not None:
            lo = src.lo + _dim0_rows(op, self.md(op.operands[0]), md) * self.md(op.operands[0]).buffer_units
            self.env[op.results[0]] = Foot(src.alloc, lo, lo + md.size, src.view, src.name)
        else:                                           # other subslices (whole source), trans, reshape
            self.env[op.results[0]] = src


def _dim0_rows(op, smd, md):
    """The first dim-0 entry of a subslice that cuts only dim 0 (whole entries: contiguous), else None."""
    try:
        offs = [int(x) for x in re.findall(r"-?\d+", str(op.attributes["offsets"]).split(":", 1)[-1])]
    except KeyError:
        return None
    if offs and not any(offs[1:]) and list(md.shape[1:]) == list(smd.shape[1:]):
        return offs[0]
    return None


def _name(v) -> str:
    try:
        return v.get_name()
    except Exception:
        return "?"


def _str_attr(op, name):
    try:
        text = str(op.attributes[name])
    except KeyError:
        return None
    return text[1:-1] if text.startswith('"') else text


def _arg_name(arg) -> str:
    """A kernel argument's name, as Gluon writes it in the argument's location (`M`, `a_desc.shape.1`)."""
    m = re.search(r'loc\("([^"]+)"', str(arg.location))
    return m.group(1) if m else ""


def unroll(text: str, value, path: str = "kernel.ttgir") -> Unroll:
    from tlx_alias.verify.source import load_triton
    loaded = load_triton(text, path)
    with loaded.context:
        return Unroll(loaded.module, loaded.aliases, value)


# ------------------------------------------------------------------------------------------------ explore

def _clash(a: Foot, wa: bool, b: Foot, wb: bool) -> bool:
    return (wa or wb) and a.alloc == b.alloc and a.lo < b.hi and b.lo < a.hi


def explore(u: Unroll, max_states: int = MAX_STATES) -> Verdict:
    """Every interleaving and async completion order of the unrolled threads (see the module doc)."""
    traces = u.traces
    T = len(traces)
    nb = len(u.bars)
    out = Verdict(events=sum(map(len, traces)))

    def accs(ev):
        return [(f, False) for f in ev.reads] + [(f, True) for f in ev.writes]

    views: dict = {}
    for trace in traces:
        for ev in trace:
            for f, _ in accs(ev):
                views.setdefault(f.alloc, set()).add(f.view)
    shared = set(u.backings) | {a for a, keys in views.items() if len(keys) > 1}

    cur = [None]

    def record(new_ev, new, old_ev, old):
        (fa, wa), (fb, wb) = old, new
        lo, hi = max(fa.lo, fb.lo), min(fa.hi, fb.hi)
        h = Hazard((old_ev.op, old_ev.src, "write" if wa else "read", fa.name),
                   (new_ev.op, new_ev.src, "write" if wb else "read", fb.name),
                   u.allocs[fa.alloc], lo, hi, fa.view != fb.view, fa.alloc in shared)
        if h not in out.hazards:
            out.hazards.add(h)
            out.witness[h] = schedule(cur[0]) + [f"  -> {new_ev.op} at {new_ev.src} starts while {old_ev.op} at "
                                                 f"{old_ev.src} is in flight"]

    def schedule(st):
        steps = []
        while seen.get(st) is not None:
            st, label = seen[st]
            steps.append(label)
        return steps[::-1]

    def inflight(st, skip_pipe=None):
        """(event, foot, write) of every async access issued and not complete."""
        _, _, tma, stq, wgq, pipe = st
        for t, k in tma:
            ev = traces[t][k]
            yield ev, ev.writes[0], True
        for q in stq:
            for t, k in q:
                for f in traces[t][k].reads:
                    yield traces[t][k], f, False
        for q in wgq:
            for t, k in q:
                for f in traces[t][k].reads:
                    yield traces[t][k], f, False
        for tt, q in enumerate(pipe):
            if tt == skip_pipe:
                continue
            for item in q:
                if item[0] == "m":
                    ev = traces[item[1]][item[2]]
                    for f, w in accs(ev):
                        yield ev, f, w

    def check(st, ev, skip_pipe=None):
        mine = accs(ev)
        if not mine:
            return
        for oev, of, ow in inflight(st, skip_pipe):
            for f, w in mine:
                if _clash(of, ow, f, w):
                    record(ev, (f, w), oev, (of, ow))
        if skip_pipe is None:
            return
        for item in st[5][skip_pipe]:   # the thread's own MMAs in flight, unless PTX pipelines the pair
            if item[0] != "m":
                continue
            oev = traces[item[1]][item[2]]
            for of, ow in accs(oev):
                for f, w in mine:
                    same_acc = ow and w and oev.acc == ev.acc
                    a_then_d = not ow and oev.reads and of is oev.reads[0] and w
                    if not (same_acc or a_then_d) and _clash(of, ow, f, w):
                        record(ev, (f, w), oev, (of, ow))

    def arrive(bars, b, count, tx=0):
        bars = list(bars)
        if bars[b] is None:
            return tuple(bars)                      # before init: the kernel's own bug; ignored here
        cnt, phase, left, pend = bars[b]
        left -= count
        pend += tx
        if left <= 0 and pend == 0:
            phase, left = phase + 1, cnt
        bars[b] = (cnt, phase, left, pend)
        return tuple(bars)

    start = (tuple([0] + [-1] * (T - 1)), tuple([None] * nb), frozenset(), tuple(() for _ in range(T)),
             tuple(() for _ in range(T)), tuple(() for _ in range(T)))
    seen = {start: None}           # state -> (the state before, what happened): schedules for witnesses
    stack = deque([start])         # breadth first: a witness is a shortest schedule
    while stack:
        st = stack.popleft()
        cur[0] = st
        pcs, bars, tma, stq, wgq, pipe = st
        succ = []
        labels = []
        nxt = {}
        for t in range(T):
            if pcs[t] < 0 or pcs[t] >= len(traces[t]):
                continue
            ev = traces[t][pcs[t]]
            k = pcs[t]
            n0 = len(succ)
            p2 = pcs[:t] + (k + 1,) + pcs[t + 1:]
            kind = ev.kind
            if kind == "acc":
                nxt[t] = ev
                check(st, ev)
                succ.append((p2, bars, tma, stq, wgq, pipe))
            elif kind == "tma_ld":
                check(st, ev)
                succ.append((p2, bars, tma | {(t, k)}, stq, wgq, pipe))
            elif kind == "tma_st":
                check(st, ev)
                succ.append((p2, bars, tma, _push(stq, t, (t, k)), wgq, pipe))
            elif kind == "st_wait":
                if len(stq[t]) <= ev.n:
                    succ.append((p2, bars, tma, stq, wgq, pipe))
            elif kind == "wg":
                check(st, ev)
                succ.append((p2, bars, tma, stq, _push(wgq, t, (t, k)), pipe))
            elif kind == "wg_wait":
                if len(wgq[t]) <= ev.n:
                    succ.append((p2, bars, tma, stq, wgq, pipe))
            elif kind == "mma":
                check(st, ev, skip_pipe=t)
                q = pipe[t] + (("m", t, k),) + tuple(("a", b) for b in ev.bars)
                succ.append((p2, bars, tma, stq, wgq, pipe[:t] + (q,) + pipe[t + 1:]))
            elif kind == "commit":
                succ.append((p2, bars, tma, stq, wgq, _push(pipe, t, ("a", ev.bar))))
            elif kind == "init":
                b2 = list(bars)
                b2[ev.bar] = (ev.n, 0, ev.n, 0)
                succ.append((p2, tuple(b2), tma, stq, wgq, pipe))
            elif kind == "arrive":
                succ.append((p2, arrive(bars, ev.bar, ev.n), tma, stq, wgq, pipe))
            elif kind == "expect":
                succ.append((p2, arrive(bars, ev.bar, 1, ev.n), tma, stq, wgq, pipe))
            elif kind == "wait":
                b = bars[ev.bar]
                if b is not None and b[1] % 2 != ev.n:
                    succ.append((p2, bars, tma, stq, wgq, pipe))
            elif kind == "fork":
                p3 = list(p2)
                for c in ev.tids:
                    p3[c] = 0
                succ.append((tuple(p3), bars, tma, stq, wgq, pipe))
            elif kind == "join":
                if all(pcs[c] >= len(traces[c]) for c in ev.tids):
                    succ.append((p2, bars, tma, stq, wgq, pipe))
            if len(succ) > n0:
                labels.append(f"[thread {t}] {ev.kind} {ev.op} at {ev.src}" + (f" ({ev.n})" if ev.kind in (
                    "wait", "st_wait", "wg_wait") else ""))
        # synchronous accesses of two threads enabled together: they may overlap in time
        ts = sorted(nxt)
        for x, a in enumerate(ts):
            for b in ts[x + 1:]:
                for fa, wa in accs(nxt[a]):
                    for fb, wb in accs(nxt[b]):
                        if _clash(fa, wa, fb, wb):
                            record(nxt[b], (fb, wb), nxt[a], (fa, wa))
        # the engines: any TMA load completes; stores, wgmma groups, the tcgen05 pipe retire in order. Each
        # completes only when something can observe it (late completion only adds in-flight accesses): a
        # barrier's contributions just before a thread's next event on that barrier, a store / wgmma group
        # just before its thread's wait that needs it.
        heads = [traces[t][pcs[t]] if 0 <= pcs[t] < len(traces[t]) else None for t in range(T)]
        touch = {e.bar for e in heads if e is not None and e.kind in ("wait", "arrive", "expect")}
        for ref in tma:
            ev = traces[ref[0]][ref[1]]
            if ev.bar not in touch:
                continue
            succ.append((pcs, arrive(bars, ev.bar, 0, -ev.n), tma - {ref}, stq, wgq, pipe))
            labels.append(f"  (TMA load at {ev.src} of thread {ref[0]} completes)")
        for t in range(T):
            e = heads[t]
            if stq[t] and e is not None and e.kind == "st_wait" and len(stq[t]) > e.n:
                succ.append((pcs, bars, tma, _pop(stq, t), wgq, pipe))
                labels.append(f"  (TMA store of thread {t} retires)")
            if wgq[t] and e is not None and e.kind == "wg_wait" and len(wgq[t]) > e.n:
                succ.append((pcs, bars, tma, stq, _pop(wgq, t), pipe))
                labels.append(f"  (wgmma group of thread {t} retires)")
            if pipe[t] and any(item[0] == "a" and item[1] in touch for item in pipe[t]):
                head = pipe[t][0]
                b2 = arrive(bars, head[1], 1) if head[0] == "a" else bars
                succ.append((pcs, b2, tma, stq, wgq, _pop(pipe, t)))
                what = (f"arrival on barrier {head[1]}" if head[0] == "a" else
                        f"MMA at {traces[head[1]][head[2]].src} completes")
                labels.append(f"  (tcgen05 pipe of thread {t}: {what})")
        if not succ and any(0 <= pcs[t] < len(traces[t]) for t in range(T)):
            out.hang = True
        for s, label in zip(succ, labels):
            if s not in seen:
                if len(seen) >= max_states:
                    out.complete = False
                    out.states = len(seen)
                    return out
                seen[s] = (st, label)
                stack.append(s)
    out.states = len(seen)
    return out


def _push(qs, t, item):
    return qs[:t] + (qs[t] + (item,),) + qs[t + 1:]


def _pop(qs, t):
    return qs[:t] + (qs[t][1:],) + qs[t + 1:]


def judge(text: str, values=(2,), path="kernel.ttgir", max_states=MAX_STATES) -> Verdict:
    """The oracle's verdict over the runs with every integer argument = each of `values` (merged)."""
    total = Verdict()
    for value in values:
        v = explore(unroll(text, value, path), max_states)
        total.hazards |= v.hazards
        total.witness = {**v.witness, **total.witness}
        total.hang |= v.hang
        total.complete &= v.complete
        total.states += v.states
        total.events += v.events
    return total


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--args", default="2", help="comma-separated values of every integer argument (one run each)")
    ap.add_argument("--trace", action="store_true", help="print the schedule that reaches each hazard")
    a = ap.parse_args(argv)
    with open(a.file) as f:
        text = f.read()
    v = judge(text, [int(x) for x in a.args.split(",")], a.file)
    print(f"{v.summary()}  [{v.events} events, {v.states} states{'' if v.complete else ', incomplete'}]")
    for h in sorted(v.hazards, key=str):
        print(f"  {'cross-view' if h.cross else 'one view  '} {h.alloc} [{h.lo}, {h.hi}): {h.first[2]} {h.first[3]} "
              f"by {h.first[0]} at {h.first[1]} / {h.second[2]} {h.second[3]} by {h.second[0]} at {h.second[1]}")
        if a.trace:
            print("\n".join("      " + x for x in v.witness.get(h, [])))
    return 1 if v.unsafe else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
