"""P7, the temporal proof: accesses to shared bytes are ordered, and no buffer reads what another overwrote.

P1-P6 prove *where* views lie; views that a reuse tree declares `shared` (or hand-aliased views) occupy the
same bytes by design, so their accesses must be ordered in *time*. P7 checks, for every two accesses to
overlapping bytes (TMEM: columns) of an allocation that is shared (a TLX backing, or one reached through
reinterprets, slices or several views), one of them a write, that the earlier one has *completed* before
the later one starts, in the happens-before order the kernel's own synchronization creates: accesses
through different tenants (the allocation itself, each TLX view, each `memdesc_reinterpret`), and accesses
of one tenant to its own bytes (a ring slot reloaded while a wgmma still reads it) where both footprints
are exact. And a read through a declared buffer (a TLX view) of bytes that another declared buffer wrote
over after it, ordered or not, is a violation too: the two were live at the same time (TLX's `shared`
promises they are not).

How: bounded concrete execution (`Sim`). The kernel's control and integer program runs for a few values of
its integer arguments (`RUNS`, program 0 of 1: a persistent kernel then walks several tiles; where the
program id matters, `program_dependent`, each again as program 1 of 2), every buffer index and ring counter
concrete, every loop unrolled as far as it runs. `warp_specialize` partitions are
threads, run in turn, each as far as it can before an mbarrier wait blocks it. Happens-before is tracked
with vector clocks (`VC`); the async engines get a clock entry per operation, set when it completes:

- synchronous `local_load/store`, `tmem_load/store`, allocation with a value: complete when they run
  (program order; within one partition Triton's Membar pass orders conflicting shared-memory accesses of
  the warps by CTA barriers, which is why warps are not modelled apart);
- TMA load: completes when a wait on its mbarrier observes the phase its bytes counted towards
  (mbarrier phases counted: arrivals, expect-tx bytes, parity of the wait);
- TMA store: reads its source until `async_tma_store_wait(n)` leaves at most n bulk groups of the thread
  pending (its stores, and the TMA reduces and scatters P7 does not otherwise time);
- `warp_group_dot` (async): reads its SMEM operands until `warp_group_dot_wait(n)` retires it;
- `tc_gen5_mma` (async): reads A/B and writes D until an mbarrier arrival that covers it (its own
  `mbarriers=`, or a later `tc_gen5_commit` of the same thread) is observed by a wait; a later MMA of the
  thread is ordered after an earlier one only where PTX pipelines them (`_pipelined`);
- mbarrier arrive / expect / wait: release into the phase, acquire from the completed phase; an mbarrier in
  aliased bytes, and a wait on one that an op P7 does not time takes, stop the run.
Async engines complete as late as the waits allow (a wait that can return without them does not force
them): the schedule with the least ordering for a given interleaving.

What it does not cover (a run is not all runs): the argument values of `RUNS` only, one interleaving of the
partitions per run, programs 0 of 1 and 1 of 2, warps of one partition as one thread (relies on Membar), the
generic and async proxies not distinguished (`fence_async_shared` is not checked), accesses of one tenant whose
bytes it does not place exactly (slices along an inner dimension), allocations nothing shares (one view,
no spec), other CTAs of a cluster. A run that cannot go on (a value it cannot compute, an op touching
aliased memory whose timing it does not model, a deadlock, its budget) makes P7 "cannot prove" for the
allocations it covers, with the reason; so does an op that accesses an allocation's bytes, or signals an
mbarrier, that no run executed (`_never_ran`: behind a branch the runs' values and programs do not take),
after runs as the last program of a grid and runs whose arguments and program ids Z3 solved the op's path
condition for (`_directed`).
"""
from __future__ import annotations

import copy
import os
import re
from collections import deque
from dataclasses import dataclass, field
from itertools import product
from operator import itemgetter

import z3

from tlx_alias import ttg
from tlx_alias._mlir import ir, per_type, terminator
from tlx_alias.errors import TlxAliasError
from tlx_alias.memdesc import parse_memdesc

from .encode import _attr_int, _attr_ints, _attr_str, call_sites, loc_info
from .execute import EVAL, Bindings, _op, _width, comparison, constant_value
from .props import PROVEN, UNKNOWN, VIOLATION, Verdict, reuse_relation

# Every integer kernel argument takes each value in turn, one run each. A loop run `n` times (7, 6, 5, 256) or
# over cdiv(n, 64) blocks (1, 2, 3, 4, 6) then ends on every slot of a ring of 2, 3 or 4 (over blocks of 32 or
# 128: of 2 or 3); 384 gives floor(n / 128) = 3 blocks (blackwell_attention's key blocks); 3, 2 and 1 give loops
# of one to three trips (a prologue of STAGES - 1 unpredicated loads overruns them). Small runs cost little.
RUNS = (256, 384, 192, 128, 7, 6, 5, 3, 2, 1)
# Each of them runs as program 0 of 1 (a persistent kernel walks every tile); where the program id or the grid's
# size reaches anything a run reads but addresses (`program_dependent`), each value that completed runs again as
# program 1 of 2 on every axis (`PROGRAM_RUN`): a race only where `program_id > 0` or `num_programs > 1` (a
# branch on the program, a ring counter or phase taken from the tile id) was "proven" on program 0 of 1 alone.
PROGRAM_RUN = (1, 2)
PROGRAM, PROGRAMS = "program_id", "num_programs"   # keys of a run's env that no IR value can be
MAX_STEPS = 20_000           # ops executed per run by default (TLX_ALIAS_P7_STEPS; over it: retried with the
                             # arguments / 4)
BUDGET_MARGIN = 2            # a loop whose cheapest iteration so far, times the iterations left, would take the run
                             # past this many budgets ends the run at once: it would use the budget up (a whole
                             # budget spent on each run that does cost fa_tutorial_borrow's proof 155 of 259 ms)
GC_STEPS = 1_000             # ops between two passes of `Sim.forget`
MIN_VALUE = 4                # ... down to this value
MAX_TRIPS = 4096             # iterations of one loop per entry
TRACE_EVENTS = 200           # events kept for --trace
MAX_VIOLATIONS = 8           # distinct (op, op) pairs reported per allocation

SYNC_READ = {"ttg.local_load", "ttng.tmem_load"}
SYNC_WRITE = {"ttg.local_store", "ttng.tmem_store", "ttg.local_alloc", "ttng.tmem_alloc"}
BARRIER_OPS = {"ttng.init_barrier", "ttng.inval_barrier", "ttng.barrier_expect", "ttng.arrive_barrier",
               "ttng.wait_barrier"}
NO_MEMORY = {"ttng.fence_async_shared", "ttg.barrier", "gpu.barrier", "ttg.local_dealloc", "ttng.tmem_dealloc",
             "ttng.async_tma_store_wait", "ttng.warp_group_dot_wait", "scf.yield", "scf.condition",
             "ttg.warp_yield", "ttg.warp_return", "tt.return", "arith.select"}
# ops P7 does not time that commit a bulk async group, which `async_tma_store_wait` retires with the TMA stores
BULK_GROUPS = {"ttng.async_tma_reduce", "ttng.async_tma_scatter"}
DESC = {"ttg.memdesc_reinterpret", "ttg.memdesc_index", "ttg.memdesc_subslice", "ttng.tmem_subslice",
        "ttg.memdesc_trans", "ttg.memdesc_reshape"}


_SCALAR = {"i1", "i8", "i16", "i32", "i64", "index"}


class Stop(Exception):
    """The run cannot go on: P7 cannot prove (the message says why and where)."""


class Deadlock(Stop):
    """Every thread waits. Below every run that completed, these argument values are outside the kernel's
    domain (e.g. fewer loop trips than its prologue assumes): the run is reported as skipped; above one, the
    kernel hangs where it should run, and P7 cannot prove."""


class Budget(Stop):
    """The run took more than MAX_STEPS ops (the caller retries with smaller argument values)."""


def _is_desc(v, seen: dict) -> bool:
    """Is `v` a memory descriptor? `seen`: the kernel's answers by type (`_Static.desc_types`), so a type is
    printed once, not once per value; per kernel, not per process, since a type keeps its MLIR context alive
    (a process-wide cache held every compile's context: 0.3 MB more per proof)."""
    return per_type(seen, v.type, lambda text: "memdesc<" in text)


def _is_scalar(v, seen: dict) -> bool:
    """Is `v` an integer scalar a run computes (`_SCALAR`)? `seen`: `_Static.scalar_types`."""
    return per_type(seen, v.type, lambda text: text in _SCALAR)


def _is_barrier_type(v, seen: dict) -> bool:
    """Is `v` an mbarrier (a memdesc of i64)? `seen`: `_Static.barrier_types`."""
    return per_type(seen, v.type, lambda text: "xi64" in text)


@dataclass
class Foot:
    """What a descriptor value denotes at run time: units [lo, hi) of `alloc`, seen through `tenant`."""
    alloc: object
    lo: int
    hi: int
    tenant: str                      # key of the view the bytes are accessed through
    label: str                       # its name for people
    exact: bool = True               # False: somewhere inside [lo, hi) (a slice whose bytes are not followed)
    box: tuple | None = None         # inexact slice: (offsets, shape, frame) in the elements of [lo, hi) (`_slice_box`)


@dataclass(eq=False)
class Access:
    op: object
    foot: Foot
    write: bool
    kind: str                        # "sync", "tma-load", "tma-store", "wgmma", "tcgen05"
    thread: "Thread"
    trail: tuple
    step: int
    end: tuple | None = None         # (clock key, value) once complete: who knows it has seen it finish
    seq: int = -1                    # tcgen05: issue number within the thread
    barrier: str = ""                # TMA load: the mbarrier it counts towards
    uid: int = 0                     # its clock key (async: set when it completes)
    short: str = ""                  # TMA load: why its barrier's phase does not complete it (`Sim.maybe_complete`)
    role: str = ""                   # tcgen05: the MMA operand it is ("a", "b" or "d")
    chain: tuple | None = None       # tcgen05: its MMA's accumulator (D's bytes and types): the pipeline it is in


@dataclass
class Thread:
    tid: str
    name: str
    vc: dict = field(default_factory=dict)
    trail: list = field(default_factory=list)
    wgmma: list = field(default_factory=list)    # [[Access...]] per async dot, oldest first
    stores: list = field(default_factory=list)   # [Access] TMA stores in flight
    mmas: list = field(default_factory=list)     # tcgen05 MMAs issued and not yet known complete
    mma_seq: int = 0
    wg_seq: int = 0
    store_seq: int = 0
    done: bool = False

    def tick(self):
        self.vc[self.tid] = self.vc.get(self.tid, 0) + 1
        return (self.tid, self.vc[self.tid])


def _join(a: dict, b: dict):
    for k, v in b.items():
        if a.get(k, 0) < v:
            a[k] = v


@dataclass
class Barrier:
    key: str
    count: int
    left: int
    tx: int = 0
    phase: int = 0                   # completed phases
    acc: dict = field(default_factory=dict)
    done: list = field(default_factory=list)     # VC of each completed phase
    pending: list = field(default_factory=list)  # async contributions not yet forced, oldest first
    expected: int = 0                # bytes the current phase's expects announced
    landed: list = field(default_factory=list)   # TMA loads forced into the current phase
    late: list = field(default_factory=list)     # TMA loads an overshot phase did not complete (`_overshoot`)


@dataclass
class Violation:
    first: Access
    second: Access
    lo: int
    hi: int
    why: str
    trace: list
    kind: str = "sync"               # the completion that was missing: the first access's engine, or "sync"


class _ByObject(dict):
    """A memo keyed by the Python object (its id), not by the bindings' hash of the op or block it wraps: a
    hash calls into the bindings (about a tenth of a proof's instructions), and a run asks its memos at every
    step with the same wrappers, its plans'. Each entry holds its object, so no other object can take its id
    while the entry is kept; another wrapper of the same op or block is another entry with the same answer."""

    def read(self, obj, compute):
        """`compute(obj)`, computed on the first call for `obj` only."""
        entry = self.get(id(obj))
        if entry is None:
            entry = self[id(obj)] = (obj, compute(obj))
        return entry[1]


class _Static:
    """What a run reads from the IR and that no run changes (op plans, operand lists, constants, sources,
    descriptor types), kept once per kernel and path for all of P7's runs: reading the IR through the
    bindings (operand lists, attribute and type printouts) cost more than the runs' own bookkeeping."""

    def __init__(self, kernel):
        self.alloc_of = {_op(a.op): a for a in kernel.allocs}
        self.plans = _ByObject()         # block -> [(op, scalar step or None, handler or None)] (`Sim.plan`)
        self.terms = _ByObject()         # block -> the `env` keys of its terminator's operands
        self.term_ops = _ByObject()      # block -> its terminator (listing a block's ops reads each through the
                                         # bindings: a tenth of a run where done at every block's end)
        self.args = _ByObject()          # block -> the `env` keys of its arguments
        self.descs = _ByObject()         # op -> its descriptor operands
        self.src = _ByObject()
        self.where = _ByObject()
        self.aliased: dict = {}
        self.mds: dict = {}              # `key` of a descriptor -> its memdesc
        self.memo: dict = {}             # what -> _ByObject {op: a fact read from its attributes or operands}
        self.desc_types: dict = {}       # type -> is a memory descriptor (`_is_desc`)
        self.scalar_types: dict = {}     # type -> is an integer scalar (`_is_scalar`)
        self.barrier_types: dict = {}    # type -> is an mbarrier (`_is_barrier_type`)
        self._ops, self._read = _ops(kernel), None   # (not the kernel: a cycle through it kept its Z3 context)
        # One Python object per IR value, op and block for all that runs key by: each read through the bindings
        # makes a new wrapper, and hashing one calls into the bindings (a run's `env` is read at every step: its
        # hashes and compares were about a tenth of a proof's instructions). A run's `env` is keyed by the id of
        # a value's one wrapper (`key`), which `values` keeps alive, so no other object takes that id.
        self.values: dict = {}           # value -> its one wrapper
        self.keyed: set = set()          # the ids of those wrappers
        self.block_of: dict = {}         # block -> its one wrapper (a `_ByObject` memo grows by each new one)
        self._const_env = self._key_plan = None

    def canon_block(self, block):
        """`block` as the wrapper runs key by (`block_of`), where a run takes a block from the IR itself rather
        than from a memo (the function's body, a partition's region, a branch's successor)."""
        return self.block_of.setdefault(block, block)

    def canon(self, values) -> list:
        """`values` as their one wrappers (`values`)."""
        known = self.values
        out = [known.setdefault(v, v) for v in values]
        self.keyed.update(map(id, out))
        return out

    def key(self, v) -> int:
        """`v`'s key in a run's `env`: the id of its one wrapper (an id and a set lookup for that wrapper itself,
        a hash for another)."""
        k = id(v)
        if k in self.keyed:
            return k
        return id(self.canon((v,))[0])

    def keys(self, values) -> list:
        return [id(v) for v in self.canon(values)]

    def operand_list(self, op) -> list:
        return self.canon(op.operands)

    def result_list(self, op) -> list:
        return self.canon(op.results)

    def operand_keys(self, op) -> list:
        return self.keys(op.operands)

    def result_keys(self, op) -> list:
        return self.keys(op.results)

    def predicate_keys(self, op) -> list:
        return self.keys(ttg.predicates(op))

    def arg_keys(self, block) -> list:
        return self.keys(block.arguments)

    @property
    def const_env(self) -> dict:
        """The kernel's integer constants by `env` key: where every run starts."""
        if self._const_env is None:
            self._const_env = {self.key(v): c for v, c in self.consts.items()}
        return self._const_env

    def read_and_consts(self) -> tuple:
        """(the scalars a run reads, the kernel's integer constants, who reads each, {op: (the walk's wrapper of it,
        its name, results, whether a run steps through it)}), found at the first run: `Sim.plan` leaves out the
        scalar arithmetic no run reads and every constant (set once at each run's start), and takes each op's
        wrapper, name, results and whether a run steps through it from the same walk."""
        if self._read is None:
            self._read = _scalars_read(self._ops, self.desc_types, self.scalar_types)
        return self._read

    @property
    def read(self) -> set:
        return self.read_and_consts()[0]

    @property
    def consts(self) -> dict:
        return self.read_and_consts()[1]

    @property
    def readers(self) -> dict:
        return self.read_and_consts()[2]

    @property
    def ops(self) -> dict:
        return self.read_and_consts()[3]


_SCALAR_STEPS = frozenset(EVAL) | {"arith.constant", "arith.select", "tt.get_program_id", "tt.get_num_programs"}


def _scalar_op(name, results, scalar_types) -> bool:
    """Is this op pure integer arithmetic (a constant, a program id, `EVAL`'s ops, a select of integers): a
    function of its operands alone, which a run computes into `env`? `scalar_types`: answers by type."""
    return name in _SCALAR_STEPS and bool(results) and all(_is_scalar(r, scalar_types) for r in results)


def _scalars_read(ops, desc_types, scalar_types) -> tuple:
    """(the scalar values some run may read, {constant: its value}, {value: the ops a run reads it for}, {op: (the
    walk's wrapper of it, its name, its results, whether a run steps through it)}: one walk of the operands and
    types). A run
    reads the operands of every op it steps through but scalar arithmetic (control flow, descriptors, barriers,
    accesses, terminators, what it does not model), less TMA coordinates and what feeds only tensors and
    pointers (addresses), and what the scalar arithmetic reaching those computes them from. The rest (a GEMM's
    tile offsets and swizzle) no run needs, and its steps were a third of blackwell_gemm's; constants were a
    fifth, stepped at every iteration."""
    defs, roots, consts, readers, info = {}, [], {}, {}, {}
    for op in ops:
        name, results = op.name, list(op.results)
        if _scalar_op(name, results, scalar_types):
            info[op] = (op, name, results, True)
            if name == "arith.constant":
                value = constant_value(op)
                if value is not None:
                    consts[results[0]] = value
            else:
                defs.update((r, op) for r in results)
            continue
        stepped = _stepped(op, name, results, desc_types, scalar_types)
        info[op] = (op, name, results, stepped)
        if not stepped:
            continue                     # tensor arithmetic, global memory: no run steps through it
        for v in op.operands:
            if not (_is_scalar(v, scalar_types) and _tma_coordinate(name, v)):
                roots.append(v)
                readers.setdefault(v, []).append(op)
    read, todo, computed = set(), roots, set()
    while todo:
        v = todo.pop()
        if v not in read:
            read.add(v)
            op = defs.get(v)
            if op is not None and op not in computed:
                computed.add(op)
                operands = list(op.operands)
                for w in operands:
                    readers.setdefault(w, []).append(op)
                todo += operands
    return read, {v: c for v, c in consts.items() if v in read}, readers, info


def _key_plan(kernel, s) -> tuple:
    """(steps computing, from a run's arguments and program, what it takes from them; those values): what a run
    reads of its arguments (`Sim.key`). Scalar arithmetic is pure, so where it runs once (the function's entry
    block, and the entry blocks of the warp_specialize regions there, whose arguments are the values captured)
    it can be computed ahead; the values it derives from an argument that anything else uses (a loop bound, a
    branch, an op inside a loop, the argument itself used there) are all a run takes from its arguments."""
    if s._key_plan is not None:
        return s._key_plan
    read, info = s.read, s.ops
    dep, once, steps = set(_int_args(kernel)), set(), []
    todo = [kernel.func.regions[0].blocks[0]]
    while todo:
        for op in todo.pop(0).operations:
            op = _op(op)
            op, name, results, _ = info.get(op) or (op, op.name, list(op.results), None)
            if name != "arith.constant" and _scalar_op(name, results, s.scalar_types) and \
                    (not len(op.operands) or any(v in dep for v in op.operands)):
                dep.update(results)
                once.add(op)
                if any(r in read for r in results):
                    steps.append(_fast_step(op, name, s))
            elif name == ttg.WS:
                parts = ttg.partitions_op(op)
                todo.append(op.regions[0].blocks[0])
                if parts is not None:
                    once.update((op, parts))   # (whichever of the two holds the captures: followed below)
                    pairs = [(c, ttg.partition_args(parts, k)) for k, c in enumerate(ttg.captures(op)) if c in dep]
                    for _, args in pairs:
                        dep.update(args)
                    steps.append(_capture_step([(s.key(c), s.keys(args)) for c, args in pairs]))
                    todo += [region.blocks[0] for region in parts.regions]
    readers = s.readers   # (a splat of an argument, a TMA coordinate: no run reads it)
    inputs = [s.key(v) for v in dep if any(op not in once for op in readers.get(v, ()))]
    s._key_plan = (steps, inputs)
    return s._key_plan


def _capture_step(pairs):
    """`pairs`: (a capture's key, its partition arguments' keys)."""
    def capture(env):   # a partition's arguments are the values captured (`Sim._ws`)
        for c, args in pairs:
            if c in env:
                env.update(dict.fromkeys(args, env[c]))
    return capture


def _stepped(op, name, results, desc_types, scalar_types) -> bool:
    """Does a run step through `op` (`Sim.plan`)? Control flow, terminators, accesses, barriers, descriptors and
    integer scalars; not tensor arithmetic nor other values (it neither decides control flow nor touches memory)."""
    return not results or name in ACCESS or name in BARRIER_OPS or bool(len(op.regions)) \
        or any(_is_scalar(r, scalar_types) or _is_desc(r, desc_types) for r in results) \
        or any(_is_desc(v, desc_types) for v in op.operands)


def _static(kernel, path) -> _Static:
    cache = kernel.__dict__.setdefault("_p7_static", {})
    if path not in cache:
        cache[path] = _Static(kernel)
    return cache[path]


def _fast_step(op, name, s):
    """For a scalar op that only reads and writes `env` (constants, integer arithmetic, program ids): a
    function of `env` that does what `Sim.op` would, with its operands' keys read from the IR once (`s`: the
    kernel's `_Static`); else None."""
    if name == "arith.constant":
        value, res = constant_value(op), s.result_keys(op)[0]
        if value is None:
            return _nothing

        def constant(env):
            env[res] = value
        return constant
    if name in EVAL and name != "arith.select":
        f, args, res = EVAL[name], s.operand_keys(op), s.result_keys(op)[0]
        w = _width(op.operands[0])
        if name == "arith.cmpi":         # its predicate read once, not at every step (an attribute read)
            cmp = comparison(op)
            f = lambda op, a, w: cmp(a[0], a[1], w)   # noqa: E731
        get = itemgetter(*args) if len(args) > 1 else (lambda env, a=args[0]: (env[a],))   # noqa: E731

        def evaluate(env):
            try:
                vals = get(env)
            except KeyError:
                return
            try:
                env[res] = f(op, vals, w)
            except (ZeroDivisionError, TypeError, ValueError):
                pass
        return evaluate
    if name == "arith.select" and not _is_desc(op.results[0], s.desc_types):
        c, x, y, res = *s.operand_keys(op)[:3], s.result_keys(op)[0]

        def select(env):
            cv = env.get(c)
            if cv is not None and x in env and y in env:
                env[res] = env[x if cv else y]
        return select
    if name in ("tt.get_program_id", "tt.get_num_programs"):
        res, key = s.result_keys(op)[0], PROGRAM if name == "tt.get_program_id" else PROGRAMS
        axis = (_attr_int(op, "axis") or 0) % 3

        def program(env):   # the run's program and the grid's size on this axis (`Sim.run`)
            env[res] = env[key][axis]
        return program
    return None


# what `Sim.once` reads of an op the first time (functions made once, not a lambda at every step)
def _body(op):
    return op.regions[0].blocks[0]


def _count(op):
    return _attr_int(op, "count")


def _size(op):
    return _attr_int(op, "size")


def _pendings(op) -> int:
    return _attr_int(op, "pendings") or 0


def _entry_blocks(op) -> tuple:
    """The first block of each region of `op` (None for an empty region: an scf.if without else)."""
    return tuple(r.blocks[0] if len(r.blocks) else None for r in op.regions)


def _nothing(env):
    pass


class Sim(Bindings):
    """One run: threads, barriers, the access history of aliased allocations, what went wrong."""

    def __init__(self, kernel, arg_value, path=None, budget: int = MAX_STEPS, program=(0, 1)):
        self.k, self.path = kernel, path
        self.arg_value, self.budget = arg_value, budget
        self.program = program           # (program id, programs): on every axis, or per axis (two 3-tuples)
        self.env: dict = {}              # `_Static.key` of a value (or PROGRAM, PROGRAMS) -> its value in this run
        self.steps = 0
        self.bars: dict = {}
        self.opaque: dict = {}           # mbarrier key -> the op P7 does not model that takes it (see `_untimed`)
        self.frontier: dict = {}         # alloc name -> {(tenant, lo, hi, box): [Access]}
        self.tenants: dict = {}          # alloc name -> {tenant: label}
        self.violations: list = []
        self.seen_pairs: set = set()
        self.events = deque(maxlen=TRACE_EVENTS)   # (thread name, text or Access): the last events, for --trace
        self.checked: dict = {}          # alloc name -> overlapping pairs of two views checked (one a write)
        self.own: dict = {}              # alloc name -> overlapping pairs within one view checked (one a write)
        self.met: set = set()            # alloc names two tenants' accesses met on (overlapping bytes)
        self.threads: list = []
        self.ran: dict = {}              # id -> op: the ops this run executed (all but scalar arithmetic), by id
                                         # for the reason `_ByObject` gives
        self.uids = 0
        self.s = _static(kernel, path)
        self.alloc_of = self.s.alloc_of
        self._src, self._aliased, self._mds = self.s.src, self.s.aliased, self.s.mds

    # -- places and names
    def where(self, op):
        return self.s.where.read(op, self._where)

    def _where(self, op):
        name, src = loc_info(op.location, self.path)
        return _attr_str(op, "tlx.name") or name, _attr_str(op, "tlx.src") or src

    def src(self, op) -> str:
        """`file:line` of `op`, and of each call of an inlined helper it is in (`(called at k.py:16)`): a race
        between two calls of one helper named the helper's lines only."""
        return self._src.read(op, self._src_of)

    def _src_of(self, op) -> str:
        src = self.where(op)[1] or "?"
        if src != "?" and not _attr_str(op, "tlx.src"):
            src += "".join(f" (called at {c})" for c in call_sites(op.location, self.path))
        return src

    def descs(self, op) -> list:
        """The descriptor operands of `op`, in order."""
        return self.s.descs.read(op, self._descs)

    def _descs(self, op) -> list:
        return [v for v in self.s.canon(op.operands) if _is_desc(v, self.s.desc_types)]

    def operands(self, op) -> list:
        """The operands of `op`, read from the IR once."""
        return self.once(op, "operands", self.s.operand_list)

    def operand_keys(self, op) -> list:
        """Their keys in `env`."""
        return self.once(op, "operand keys", self.s.operand_keys)

    def result_keys(self, op) -> list:
        return self.once(op, "result keys", self.s.result_keys)

    def once(self, op, what, read):
        """`read(op)`, read from the IR on the first call for (op, what) only (a dict per `what`: no key tuple
        made at every step)."""
        try:
            memo = self.s.memo[what]
        except KeyError:
            memo = self.s.memo[what] = _ByObject()
        return memo.read(op, read)

    def arg_keys(self, block) -> list:
        """The keys of `block`'s arguments in `env`."""
        return self.s.args.read(block, self.s.arg_keys)

    def terminator(self, block):
        return self.s.term_ops.read(block, terminator)

    def _yielded_keys(self, block) -> list:
        """The `env` keys of what `block`'s terminator passes on."""
        return self.s.terms.read(block, self._term_operands)

    def _yielded(self, block, start=0):
        values = self._yielded_keys(block)
        env = self.env
        return [env.get(v) for v in values[start:]]

    def _term_operands(self, block) -> list:
        return self.s.keys(self.terminator(block).operands)

    def log(self, th, fmt, *args):
        """An event of the interleaving, formatted (`fmt.format(*args)`) only if a trace shows it: a run logs
        every wait, arrive and expect, and formatting them all cost a tenth of a run."""
        self.events.append((th.name, (fmt, args)))

    def text(self, event) -> str:
        """One line of the interleaving (`--trace`): accesses are formatted only when shown."""
        who, e = event
        if type(e) is tuple:
            e = e[0].format(*e[1])
        elif isinstance(e, Access):
            e = (f"{'write' if e.write else 'read '} {e.foot.label} {e.foot.alloc.unit} [{e.foot.lo}, {e.foot.hi}) "
                 f"by {e.op.name} ({e.kind}) at {self.src(e.op)}{_iters(e.trail)}")
        return f"[{who}] {e}"

    @property
    def label(self) -> str:
        """The run's arguments as verdicts name them: `256`, `256 as program 1 of 2`."""
        pid, n = self.program
        if isinstance(pid, tuple):   # a run aimed at an op: its arguments by name, its program per axis
            names = [loc_info(a.location, self.path)[0] or f"arg{a.arg_number}" for a in _int_args(self.k, True)]
            args = ", ".join(f"{name} = {v}" for name, v in zip(names, self.arg_value))
            return f"({args or 'none'} as program {pid} of {n})"
        return f"{self.arg_value}" + (f" as program {pid} of {n}" if self.program != (0, 1) else "")

    def key(self):
        """What this run takes from its arguments and program (`_key_plan`): two runs of one key step through the
        same ops with the same values, so one stands for both (a GEMM's arguments 1 to 7 are one K block and one
        tile: the same run six times). None for a mixed run."""
        if isinstance(self.arg_value, tuple) or isinstance(self.program[0], tuple):
            return None
        steps, inputs = _key_plan(self.k, self.s)
        env = self._start()
        for step in steps:
            step(env)
        if not all(v in env for v in inputs):
            return None                 # a value it takes from its arguments is not computed ahead: no twin
        return self.program, tuple(env[v] for v in inputs)

    def stand_in(self, value):
        """This completed run as the run of `value`, whose key is the same: its verdict counts and names the
        run of `value` as it would have run."""
        twin = copy.copy(self)
        twin.arg_value = value
        return twin

    # -- scheduler
    def _start(self) -> dict:
        """What a run starts from (`run`, `key`): the kernel's constants, its integer arguments, the program and
        the grid's size."""
        mixed = isinstance(self.arg_value, tuple)   # a mixed run: a value per argument the kernel reads, the rest 256
        values = dict(zip(_int_args(self.k, used=True), self.arg_value)) if mixed else {}
        env = dict(self.s.const_env)
        for a in _int_args(self.k):
            env[self.s.key(a)] = values.get(a, MIXED[0]) if mixed else self.arg_value
        pid, n = self.program
        env[PROGRAM], env[PROGRAMS] = (pid, n) if isinstance(pid, tuple) else ((pid,) * 3, (n,) * 3)
        return env

    def run(self):
        body = self.s.canon_block(self.k.func.regions[0].blocks[0])
        self.env.update(self._start())
        main = Thread("t0", "default")
        self.spawn(main, self.blocks(main, body))
        try:
            self.schedule()
        except Deadlock:         # a hung run is reported with its trace: the rest goes
            self._drop_state(keep_trace=True)
            raise
        self._drop_state()
        return self

    def blocks(self, th, block):
        """`block`, then the blocks its branch leads to: a runtime `return` in the kernel, a warp_specialize
        partition or a helper Triton inlined makes the body a graph of blocks joined by `cf.br` / `cf.cond_br`
        (P7 ran the first block only, and said "proven" on a race after such a return)."""
        while True:
            yield from self.block(th, block)
            term = self.terminator(block)
            if term.name not in ("cf.br", "cf.cond_br"):
                return
            operands, succ = list(term.operands), [self.s.canon_block(b) for b in term.successors]
            if term.name == "cf.br":
                block, args = succ[0], operands
            else:   # operands: the condition, then the true and the false successor's arguments
                n_true = (_attr_ints(term, "operandSegmentSizes") or [1, 0, 0])[1]
                taken = self.val(operands[0], term)
                block = succ[0] if taken else succ[1]
                args = operands[1:1 + n_true] if taken else operands[1 + n_true:]
            self._bind([self.env.get(self.s.key(v)) for v in args], self.arg_keys(block))

    def _drop_state(self, keep_trace=False):
        """What a finished run no longer needs: its threads' generators and clocks, barriers, values, access
        history and (unless `keep_trace`: a hung run's verdict shows it) trace. Its verdict reads the ops it ran,
        its races (which copied their trace) and counts, and who touched what; the rest, kept until the proof's
        end, made ten runs' worth of live objects, and Python's collector ran twice as often during a proof
        (blackwell_gemm: 10 young collections a proof -> 4.6, and a full one, 100-170 ms in a process holding
        Triton and torch, 3 in 40 proofs -> 1)."""
        for th, gen in self.threads:
            gen.close()
            th.wgmma.clear(), th.stores.clear(), th.mmas.clear()
        for coll in (self.threads, self.frontier, self.bars, self.env, self.seen_pairs):
            coll.clear()
        if not keep_trace:
            self.events.clear()

    def close(self):
        """Drop what refers in cycles (accesses <-> threads, generators, clocks), once the verdicts are made."""
        self._drop_state()
        self.violations.clear(), self.ran.clear()

    def spawn(self, th, gen):
        self.threads.append([th, gen])

    def schedule(self):
        while True:
            live = [t for t in self.threads if not t[0].done]
            if not live:
                return
            before = self.steps
            for entry in live:
                th, gen = entry
                try:
                    next(gen)
                except StopIteration:
                    th.done = True
            if self.steps == before and all(not t[0].done for t in live) and len(live) == len(
                    [t for t in self.threads if not t[0].done]):
                blocked = "; ".join(f"{t[0].name} at {getattr(t[0], 'blocked', '?')}" for t in live)
                raise Deadlock(f"{DEADLOCK} (every thread waits: {blocked})")

    # -- interpretation
    def block(self, th, block):
        env, budget, ran = self.env, self.budget, self.ran
        for op, fast, step in self.plan(block):
            if step is None:             # control flow, warp_specialize, a wait: may block (a generator)
                yield from self.op(th, op)
                continue
            self.steps += 1              # what `op` counts and checks
            if self.steps > budget:
                raise Budget(f"the run's budget of {budget} ops is used up")
            if fast is not None:         # a scalar op
                fast(env)
                continue
            if not self.steps % GC_STEPS:
                self.forget()
            ran[id(op)] = op
            step(self, th, op)

    def plan(self, block) -> list:
        """The ops of a block that matter to a run: the scalar integer ops whose results it reads, control flow,
        descriptors, memory and barrier ops (tensor arithmetic is skipped: it neither decides control flow nor
        touches memory; constants are set at the run's start),
        each with how it runs: (op, scalar step or None, handler or None for an op that may block). Ops that
        cannot block are called, not driven as generators (a generator per op cost about a tenth of a run)."""
        return self.s.plans.read(block, self._plan)

    def _plan(self, block) -> list:
        ops, descs, scalars = [], self.s.desc_types, self.s.scalar_types
        read, info = self.s.read, self.s.ops
        for op in block.operations:
            op = _op(op)
            known = info.get(op)         # (each read through the bindings makes a new object: read once)
            op, name, results, stepped = known or (op, op.name, list(op.results), None)   # the walk's wrapper: the
                                         # one the memos of ops key by
            if name == "arith.constant" or name in _SCALAR_STEPS and not any(r in read for r in results):
                continue                 # set at the run's start, or read by no run (`_scalars_read`)
            if stepped if known else _stepped(op, name, results, descs, scalars):
                fast = _fast_step(op, name, self.s)
                step = _no_step if fast is not None else self._index_step(op) if name == "ttg.memdesc_index" \
                    else _step_of(name)
                ops.append((op, fast, step))
        return ops

    def val(self, v, op):
        return self.need(self.s.key(v), op)

    def need(self, k, op):
        """The value of `env` key `k`, which `op` needs."""
        try:
            return self.env[k]
        except KeyError:
            raise Stop(f"{op.name} at {self.src(op)} needs a value this run cannot compute") from None

    def op(self, th, op):
        """An op that may block: control flow, warp_specialize, an mbarrier wait."""
        self.ran[id(op)] = op
        self.steps += 1
        if self.steps > self.budget:
            raise Budget(f"the run's budget of {self.budget} ops is used up")
        if not self.steps % GC_STEPS:
            self.forget()
        name = op.name
        if name == "scf.for":
            yield from self._for(th, op)
        elif name == "scf.if":
            yield from self._if(th, op)
        elif name == "scf.while":
            yield from self._while(th, op)
        elif name == ttg.WS:
            yield from self._ws(th, op)
        else:
            yield from self._wait(th, op)

    def _select_desc(self, th, op):
        cond, x, y = self.operand_keys(op)[:3]
        c = self.env.get(cond)
        if c is None:
            raise Stop(f"the descriptor chosen at {self.src(op)} depends on a value this run cannot compute")
        self.env[self.result_keys(op)[0]] = self.env.get(x if c else y)

    def _alloc(self, th, op):
        a = self.alloc_of.get(op)
        if a is not None:
            res = self.once(op, "results", self.s.result_list)[0]
            self.env[self.s.key(res)] = Foot(a, 0, a.size, a.name, a.name)
            if len(op.operands):
                self.access(th, op, res, True, "sync")

    def _untimed(self, th, op):
        """An op this model does not time: fine unless it touches aliased memory (then P7 gives up). An mbarrier it
        takes (it may arrive on it: `tcgen05_mma_scaled(mbarriers=)`, cp.async's arrive) can no longer be counted:
        a later wait on it gives up too."""
        for v in self.descs(op):
            f = self.env.get(self.s.key(v))
            if not isinstance(f, Foot):
                continue
            if self.aliased(f.alloc):
                raise Stop(f"{op.name} at {self.src(op)} touches {f.alloc.name}, and P7 does not model "
                           "when it reads or writes")
            if _is_barrier_type(v, self.s.barrier_types):
                if op.name == "tt.call":   # a noinline helper may wait on it: what the wait orders is not seen
                    raise Stop(f"the call at {self.src(op)} takes the mbarrier {f.label}, and P7 does not follow "
                               "calls (a wait or an arrive in the helper)")
                self.opaque.setdefault(f"{f.alloc.name}+{f.lo}", f"{op.name} at {self.src(op)}")
        if op.name in BULK_GROUPS:       # a bulk async group of its own: `store_wait(n)` counts it
            th.store_seq += 1
            th.stores.append((th.store_seq, None))

    def aliased(self, alloc) -> bool:
        """An allocation whose bytes are shared: a TLX backing, a borrowed buffer, or several views (reinterprets,
        slices; two of one name, e.g. made by one helper, are still two; a transpose or reshape is its source)."""
        try:
            return self._aliased[alloc]
        except KeyError:
            out = self._aliased[alloc] = bool(alloc.spec) or any(s.borrow for s in alloc.subs) or \
                len(_placed_views(alloc)) > 1
            return out

    # -- control flow
    def _for(self, th, op):
        lb, ub, step = (self.need(k, op) for k in self.operand_keys(op)[:3])
        body = self.once(op, "body", _body)
        state = [self.env.get(k) for k in self.operand_keys(op)[3:]]
        where = self.src(op)
        iv, trips, args, cheapest = lb, 0, self.arg_keys(body), None
        while iv < ub:
            trips += 1
            if trips > MAX_TRIPS:
                raise Stop(f"the loop at {where} runs more than {MAX_TRIPS} iterations")
            self._bind([iv] + state, args)
            th.trail.append((where, trips - 1))
            before = self.steps
            yield from self.block(th, body)
            th.trail.pop()
            state = self._yielded(body)
            iv += step
            cost = self.steps - before
            cheapest = cost if cheapest is None else min(cheapest, cost)
            if trips >= 2 and step > 0 and self.steps + -(-(ub - iv) // step) * cheapest > BUDGET_MARGIN * self.budget:
                raise Budget(f"the loop at {where} would use up the run's budget of {self.budget} ops")
        self._bind(state, self.result_keys(op))

    def _if(self, th, op):
        cond = self.need(self.operand_keys(op)[0], op)
        block = self.once(op, "branches", _entry_blocks)[0 if cond else 1]
        if block is None:
            return
        yield from self.block(th, block)
        self._bind(self._yielded(block), self.result_keys(op))

    def _while(self, th, op):
        before, after = self.once(op, "branches", _entry_blocks)
        state = [self.env.get(k) for k in self.operand_keys(op)]
        where = self.src(op)
        for trip in range(MAX_TRIPS + 1):
            self._bind(state, self.arg_keys(before))
            yield from self.block(th, before)
            cond = self.need(self._yielded_keys(before)[0], op)
            forwarded = self._yielded(before, 1)
            if not cond:
                self._bind(forwarded, self.result_keys(op))
                return
            self._bind(forwarded, self.arg_keys(after))
            th.trail.append((where, trip))
            yield from self.block(th, after)
            th.trail.pop()
            state = self._yielded(after)
        raise Stop(f"the loop at {where} runs more than {MAX_TRIPS} iterations")

    def _ws(self, th, op):
        """Workers are new threads (they start with the parent's clock); the parent runs the default region,
        then waits for every worker (the region's end joins them)."""
        parts = self.once(op, "partitions", ttg.partitions_op)
        workers = []
        if parts is not None:
            caps = [self.env.get(k) for k in self.once(op, "capture keys", lambda op: self.s.keys(ttg.captures(op)))]
            for k, region in enumerate(parts.regions):
                w = Thread(f"{th.tid}.{k}", f"partition {k} ({self.src(op)})", dict(th.vc), list(th.trail))
                entry = self.s.canon_block(region.blocks[0])
                self._bind(caps, self.arg_keys(entry))
                workers.append(w)
                self.spawn(w, self.blocks(w, entry))
        th.tick()
        yield from self.blocks(th, self.once(op, "body", _body))
        while not all(w.done for w in workers):
            th.blocked = f"the end of warp_specialize at {self.src(op)}"
            yield
        for w in workers:
            _join(th.vc, w.vc)

    # -- descriptors
    def _desc(self, th, op):
        name, src_v, res, md = self.once(op, "desc", self._desc_operands)
        src = self.env.get(src_v)
        if not isinstance(src, Foot):
            return                      # not tracked (e.g. a descriptor of no allocation): uses will say
        if name == "ttg.memdesc_reinterpret":
            tenant, label = self.once(op, "tenant", lambda op: (
                _tenant_key(op), self.where(op)[0] or _attr_str(op, "tlx.name") or f"reinterpret at {self.src(op)}"))
            # from an inexact source the new view starts somewhere in [lo, hi): cover every such start
            hi = src.lo + md.size if src.exact else src.hi + md.size
            self.env[res] = Foot(src.alloc, src.lo, hi, tenant, label, src.exact)
            return
        if name == "ttng.tmem_subslice":
            off = self.once(op, "columns", self._subslice_columns)
            if off is None or not src.exact:
                self.env[res] = Foot(src.alloc, src.lo, src.hi, src.tenant, src.label, False)
            else:
                self.env[res] = Foot(src.alloc, src.lo + off, src.lo + off + md.size, src.tenant, src.label)
            return
        if name == "ttg.memdesc_subslice":
            offs, rows, frame = self.once(op, "subslice", lambda op: self._subslice(op, md))
            if src.exact and rows is not None:                # whole entries of dim 0: contiguous bytes
                lo = src.lo + rows
                self.env[res] = Foot(src.alloc, lo, lo + md.size, src.tenant, src.label)
            else:   # inside its source: which bytes is not followed, which of its elements is (see `_covers`)
                self.env[res] = Foot(src.alloc, src.lo, src.hi, src.tenant, src.label, False,
                                     _slice_box(src, offs, list(md.shape), frame))
            return
        self.env[res] = Foot(src.alloc, src.lo, src.hi, src.tenant, src.label, src.exact)   # trans / reshape

    def _desc_operands(self, op):
        """(name, source's key, result's key, result's memdesc)."""
        src, res = self.s.canon((op.operands[0], op.results[0]))
        return op.name, id(src), id(res), self.k_md(res)

    def _index_step(self, op):
        """The step of a `ttg.memdesc_index` (buffer i of its source, `units` apart), its operands and sizes read
        when planned: the most frequent descriptor op of a ring's loop."""
        (src_v, i_v), res_v = self.s.canon(list(op.operands)[:2]), self.s.canon(op.results)[0]
        units, size = self.k_md(src_v).buffer_units, self.k_md(res_v).size
        src_k, i_k, res = id(src_v), id(i_v), id(res_v)

        def index(sim, th, op):
            src = sim.env.get(src_k)
            if not isinstance(src, Foot):
                return                  # not tracked (e.g. a descriptor of no allocation): uses will say
            if not src.exact:
                sim.env[res] = Foot(src.alloc, src.lo, src.hi, src.tenant, src.label, False)
                return
            lo = src.lo + sim.need(i_k, op) * units
            sim.env[res] = Foot(src.alloc, lo, lo + size, src.tenant, src.label)
        return index

    def _subslice(self, op, md):
        """(offsets, units from the source's start where the slice takes whole entries of dim 0 else None, frame:
        the source's shape and type) of a memdesc_subslice, read once."""
        offs, smd = _attr_ints(op, "offsets") or [], self.k_md(op.operands[0])
        whole = offs and not any(offs[1:]) and list(md.shape[1:]) == list(smd.shape[1:])
        return offs, offs[0] * smd.buffer_units if whole else None, (tuple(smd.shape), str(op.operands[0].type))

    def _subslice_columns(self, op):
        """First column of a TMEM subslice within its source, or None where the op does not say."""
        n = _attr_int(op, "N")
        if n is None and (_attr_int(op, "dim") or 1) == 1:
            n = _attr_int(op, "offset")
        return int(n * self.k_md(op.operands[0]).cols_per_element()) if n is not None else None

    def k_md(self, v):
        k = self.s.key(v)
        try:
            return self._mds[k]
        except KeyError:
            out = self._mds[k] = _md(self.k, v)
            return out

    def foot(self, v, op) -> Foot | None:
        f = self.env.get(self.s.key(v))
        if f is None and _is_desc(v, self.s.desc_types):
            raise Stop(f"{op.name} at {self.src(op)} uses a descriptor this run did not follow")
        return f

    # -- accesses and the happens-before check
    def access(self, th, op, v, write, kind, barrier="", seq=-1, role="", chain=None) -> Access | None:
        f = self.foot(v, op)
        if f is None or not self.aliased(f.alloc):
            return None
        if kind == "sync":
            end = th.tick()
        else:
            th.tick()
            end = None
        self.uids += 1
        a = Access(op, f, write, kind, th, tuple(th.trail), self.steps, end, seq, barrier, self.uids,
                   role=role, chain=chain)
        self.events.append((th.name, a))
        self.tenants.setdefault(f.alloc.name, {})[f.tenant] = f.label
        front = self.frontier.setdefault(f.alloc.name, {})
        key = (f.tenant, f.lo, f.hi, f.box)   # slices of one view apart: a clobbered read asks which they rewrote
        mine = front.get(key, [])
        reads_buffer = not write and f.exact and _declared(f)
        overwritten = None               # writes through other declared buffers this read is ordered after
        vc = th.vc
        for (tenant, lo, hi, _), olds in front.items():
            if hi <= f.lo or f.hi <= lo:
                continue
            same = tenant == f.tenant    # one view's own bytes (a ring slot reused): only where both are exact
            if not same:
                self.met.add(f.alloc.name)
            for old in olds:
                if not (old.write or write) or (same and not (f.exact and old.foot.exact)):
                    continue
                counts = self.own if same else self.checked
                counts[f.alloc.name] = counts.get(f.alloc.name, 0) + 1
                end = old.end            # `hb`'s usual answer, without the call: this thread saw it complete
                why = "" if end is not None and vc.get(end[0], 0) >= end[1] else self.unordered(old, a)
                if why:
                    self.report(old, a, max(lo, f.lo), min(hi, f.hi), why)
                elif reads_buffer and not same and old.foot.exact and _declared(old.foot):
                    overwritten = (overwritten or []) + [old]   # (rare: no list per access otherwise)
        for old in overwritten or ():
            # its own bytes written again since, whole (a ring slot's next load): not clobbered (`_clobbered`'s
            # first answer, without its walk of every access kept)
            if not any(w.write and w.uid > old.uid and w.foot.exact for w in mine):
                self._clobbered(front, old, a)
        keep = [o for o in mine if not (self.hb(o, a) and (write or not o.write))]
        keep.append(a)
        front[key] = keep
        return a

    def _clobbered(self, front, old: Access, a: Access):
        """`a` reads bytes of its buffer that `old`, a write through another declared buffer ordered before it,
        overwrote: unless `a`'s own buffer wrote them again since, it reads the other buffer's data (its own was
        overwritten while still in use: the two were live at the same time)."""
        lo, hi = max(old.foot.lo, a.foot.lo), min(old.foot.hi, a.foot.hi)
        # written again since: through the buffer itself, or through a reinterpret (a deliberate pun: whose
        # data it writes is the kernel's to say, e.g. P stored through a view of S and read through P)
        again = [w for (tenant, _, _, _), ws in front.items() for w in ws
                 if w.write and w.uid > old.uid and w.foot.lo < hi and lo < w.foot.hi
                 and (tenant == a.foot.tenant or not _declared(w.foot))]
        spans, boxes = [], {}            # the bytes written again; slices grouped by the bytes they lie in
        for w in again:
            if w.foot.exact:
                spans.append((w.foot.lo, w.foot.hi))
            elif w.foot.box is not None:
                boxes.setdefault(_tile(w.foot), []).append(w.foot.box[:2])
        for (wlo, whi, whole), parts in boxes.items():
            if _covers(parts, whole[0]):    # slices (e.g. column halves of an epilogue tile) that rewrite all of it
                spans.append((wlo, whi))
        first = lo
        for wlo, whi in sorted(spans):   # do the later writes cover [lo, hi)?
            if wlo <= first < whi:
                first = whi
        if first >= hi:
            return
        why = f"{a.foot.label} reads bytes that {old.foot.label} wrote over at {self.src(old.op)} after "
        inexact = [w for w in again if not w.foot.exact]
        w = next((w for w in inexact if w.foot.lo <= first < w.foot.hi), None)
        if w is None:                    # byte `first` was not written again
            self.report(old, a, first, hi, why + f"{a.foot.label} last wrote them: the two buffers were live at the "
                        "same time", kind="clobber")
            return
        # byte `first` lies in slices written again that leave some of their elements unwritten: those elements
        # surely hold the other buffer's data where the slices' bytes were all overwritten and nothing else
        # wrote there since; else which data the read sees is not followed
        tile = _tile(w.foot)
        if w.foot.box is not None and lo <= tile[0] and tile[1] <= hi and \
                not any(s < tile[1] and tile[0] < e for s, e in spans) and \
                all(_tile(x.foot) == tile for x in inexact if x.foot.lo < tile[1] and tile[0] < x.foot.hi):
            self.report(old, a, tile[0], tile[1], why + f"{a.foot.label} last wrote all of them (the slices written "
                        f"again at {self.src(w.op)} leave part of them): the two buffers were live at the same time",
                        kind="clobber")
            return
        raise Stop(f"{a.foot.label} at {self.src(a.op)} reads bytes that {old.foot.label} wrote over at "
                   f"{self.src(old.op)}, and {w.foot.label} wrote part of them again through a slice at "
                   f"{self.src(w.op)}: which of the two buffers' data it reads is not followed")

    def hb(self, a: Access, b: Access) -> bool:
        if a.kind == b.kind == "tcgen05" and a.thread is b.thread and a.seq <= b.seq and _pipelined(a, b):
            return True
        if a.end is None:
            return False
        k, v = a.end
        return b.thread.vc.get(k, 0) >= v

    def unordered(self, a, b) -> str:
        if self.hb(a, b):
            return ""
        if a.end is None:
            return _in_flight(a, self)
        return (f"{a.thread.name} finished it, but nothing orders that before {b.thread.name}'s access: no mbarrier "
                f"wait in {b.thread.name} observes a phase released after it")

    def report(self, a, b, lo, hi, why, kind=None):
        pair = (a.op, b.op)
        if pair in self.seen_pairs or len(self.violations) >= MAX_VIOLATIONS:
            return
        self.seen_pairs.add(pair)
        kind = kind or ("tma-bytes" if a.short else a.kind if a.end is None else "sync")
        self.violations.append(Violation(a, b, lo, hi, why, list(self.events), kind))

    def forget(self):
        """Drop from every clock the keys of TMA loads no later check can ask about (those no longer in an
        access frontier): each completed load is a clock key of its own, and joining clocks that carry every
        load of a long run made P7 quadratic in the run's length. Verdicts do not change: `hb` reads a
        load's key only for an access still in a frontier."""
        live = {a.end[0] for front in self.frontier.values() for olds in front.values() for a in olds
                if a.end is not None and a.end[0][0] == "tma"}

        def prune(vc):
            for k in [k for k in vc if type(k) is tuple and k[0] == "tma" and k not in live]:
                del vc[k]
        for th, _ in self.threads:
            prune(th.vc)
        for b in self.bars.values():
            prune(b.acc)
            for k in range(len(b.done) - 1):   # only the last completed phase is ever joined again
                b.done[k] = {}
            if b.done:
                prune(b.done[-1])
            for c in b.pending:
                prune(c[-1])

    def complete(self, a: Access, key):
        if a.end is None:
            a.end = key

    # -- barriers
    def bar(self, v, op) -> Barrier:
        f = self.foot(v, op)
        key = f"{f.alloc.name}+{f.lo}" if f else "?"
        if key not in self.bars:
            raise Stop(f"{op.name} at {self.src(op)} uses the mbarrier {key} before any init_barrier")
        return self.bars[key]

    def _pred(self, op, k_from_end=None):
        flags = self.once(op, "flag keys", self.s.predicate_keys)
        if not flags:
            return True
        p = self.env.get(flags[0] if k_from_end is None else flags[k_from_end])
        if p is None:
            raise Stop(f"the predicate of {op.name} at {self.src(op)} cannot be computed by this run")
        return bool(p)

    def _barrier(self, th, op):
        name = op.name
        if name == "ttng.init_barrier":
            f = self.foot(op.operands[0], op)
            if self.aliased(f.alloc):
                raise Stop(f"the mbarrier initialized at {self.src(op)} lies in {f.alloc.name}, whose bytes other "
                           "buffers share: P7 does not follow an mbarrier's bytes as memory")
            key = f"{f.alloc.name}+{f.lo}"
            n = self.once(op, "count", _count) or 1
            self.bars[key] = Barrier(key, n, n)
            return
        if name == "ttng.inval_barrier":
            return
        if not self._pred(op):
            return
        b = self.bar(self.operands(op)[0], op)
        if name in ("ttng.arrive_barrier", "ttng.barrier_expect"):
            self.settle(b)
        if name == "ttng.arrive_barrier":
            self.log(th, "arrive on {} (phase {}) at {}{}", b.key, b.phase, self.src(op), _Trail(th.trail))
            th.tick()
            self.arrive(b, dict(th.vc), self.once(op, "count", _count) or 1)
            return
        if name == "ttng.barrier_expect":
            th.tick()
            size = self.once(op, "size", _size)
            b.tx += size or 0
            b.expected += size or 0
            self.log(th, "expect {} bytes on {} (phase {}) at {}", size, b.key, b.phase, self.src(op))
            self.arrive(b, dict(th.vc), 1)
            return
        raise AssertionError(f"{name} is not a barrier op that returns at once")

    def _wait(self, th, op):
        """`wait_barrier`: returns once the barrier's phase parity differs from the operand's, forcing async
        contributions of the current phase while there are any; otherwise blocks (yields)."""
        if not self._pred(op):
            return
        ops = self.operands(op)
        b = self.bar(ops[0], op)
        if b.key in self.opaque:
            raise Stop(f"the wait on the mbarrier {b.key} at {self.src(op)}: {self.opaque[b.key]} signals it too, and "
                       "P7 does not model when, so it cannot count the barrier's phases")
        parity = self.val(ops[1], op) & 1
        while True:
            if b.phase % 2 != parity:
                if b.phase:
                    _join(th.vc, b.done[b.phase - 1])
                self.log(th, "wait on {} parity {} returns (phase {} complete) at {}{}", b.key, parity, b.phase - 1,
                         self.src(op), _Trail(th.trail))
                return
            if b.pending:
                self.force(b, b.pending.pop(0))
                continue
            th.blocked = f"the wait on {b.key} at {self.src(op)}"
            yield

    def settle(self, b):
        """Before a thread arrives: a phase that has all its arrivals and waits only on TMA bytes completes
        first. The hardware lets those bytes land before this arrival (a phase cannot take more arrivals
        than its count), and a wait on the earlier parity then returns without the bytes this arrival's
        phase brings; merging them into one phase would order more than the kernel does (found by the
        mutation oracle, test/tools/p7_mutate.py: a flipped parity on a TMA ring)."""
        while b.left <= 0 and b.tx > 0 and any(c[0] == "tma" for c in b.pending):
            c = next(c for c in b.pending if c[0] == "tma")
            b.pending.remove(c)
            self.force(b, c)

    def arrive(self, b, vc, count):
        b.left -= count
        _join(b.acc, vc)
        self.maybe_complete(b)

    def maybe_complete(self, b):
        if b.left <= 0 and b.tx <= 0:
            for a in b.late:             # the bytes an overshot phase left in flight are counted by this one
                self.complete(a, (("tma", a.uid), 1))
                b.acc[("tma", a.uid)] = 1
            b.late = []
            if b.tx < 0:                 # its loads bring more bytes than it expects: see `_overshoot`
                self._overshoot(b)
            b.done.append(b.acc)
            b.phase += 1
            b.left, b.tx, b.acc, b.expected, b.landed = b.count + b.left, 0, {}, 0, []

    def _overshoot(self, b):
        """A phase whose TMA loads bring more bytes than its expects announced completes as soon as the
        announced number has landed, whichever bytes those are (loads land in pieces, in no order): it completes
        none of its loads; their surplus bytes count towards the next phase, which completes them. (P7 lands each
        load whole in issue order; without this the same bug was "proven" or not depending on which load the
        kernel issued first.)"""
        got = b.expected - b.tx
        for a in b.landed:
            b.acc.pop(("tma", a.uid), None)
            a.end = None
            b.late.append(a)
            a.short = (f"its mbarrier {b.key} expects {b.expected} bytes in this phase, fewer than its TMA loads bring "
                       f"(at least {got}): the phase completes once any {b.expected} of them have landed, before this "
                       "load has")

    def force(self, b, c):
        """An async contribution to `b` happens now (as late as possible: only a wait makes it)."""
        kind = c[0]
        if kind == "tma":
            _, a, nbytes, vc = c
            key = ("tma", a.uid)
            self.complete(a, (key, 1))
            done = dict(vc)
            done[key] = 1
            b.tx -= nbytes
            b.landed.append(a)
            _join(b.acc, done)
            self.maybe_complete(b)
        else:                           # a tcgen05 arrival: every MMA of the thread issued before it is done
            _, th, upto, vc = c
            pipe = ("pipe", th.tid)         # the thread's tcgen05 pipe completes in issue order
            for m in [m for m in th.mmas if m[0].seq < upto]:
                for a in m:
                    self.complete(a, (pipe, a.seq))
            th.mmas = [m for m in th.mmas if m[0].seq >= upto]
            done = dict(vc)
            done[pipe] = max(done.get(pipe, 0), upto - 1)
            b.left -= 1
            _join(b.acc, done)
            self.maybe_complete(b)


def _md(kernel, v):
    """`v`'s memdesc, from the types the model parsed (`Kernel.types`) or parsed here."""
    return per_type(kernel.types, v.type, lambda text: parse_memdesc(text, kernel.aliases))


class _Trail:
    """The innermost loop iterations of a thread at an event, formatted only if a trace shows it."""
    __slots__ = ("trail",)

    def __init__(self, trail):
        self.trail = trail[-2:]

    def __str__(self):
        return _iters(self.trail)


def _iters(trail) -> str:
    if not trail:
        return ""
    return " (" + ", ".join(f"iteration {i} of the loop at {w}" for w, i in trail[-2:][::-1]) + ")"


def _in_flight(a: Access, sim) -> str:
    src = sim.src(a.op)
    if a.kind == "tma-load":
        if a.short:
            return f"the TMA load at {src} was still writing: {a.short}"
        return (f"the TMA load at {src} was still writing: no wait on its mbarrier {a.barrier} observed the phase "
                "it completes before this access")
    if a.kind == "tma-store":
        return f"the TMA store at {src} was still reading: no `tma.store_wait` retired it before this access"
    if a.kind == "wgmma":
        return (f"the warpgroup_mma at {src} was still reading its operands: no `warpgroup_mma_wait` retired it "
                "before this access")
    if a.kind == "tcgen05":
        return (f"the tcgen05_mma at {src} was still running: no wait observed an mbarrier arrival "
                "(its mbarriers= or a later tcgen05_commit) that covers it")
    return f"the access at {src} had not completed"


# -- one handler per timed op: (sim, thread, op)

def _sync(sim, th, op):
    if op.name in ttg.PREDICATED_OPS and not sim._pred(op):
        return                           # a tmem_store whose `pred` is false writes nothing
    write = op.name in SYNC_WRITE
    for v in sim.descs(op):
        sim.access(th, op, v, write, "sync")


def _tma_load(sim, th, op):
    if not sim._pred(op):
        return
    descs = sim.descs(op)            # (barrier, destination): the op's order of operands (an i64 tile is no barrier)
    if len(descs) != 2 or not _is_barrier_type(descs[0], sim.s.barrier_types):
        raise Stop(f"{op.name} at {sim.src(op)}: cannot tell its barrier from its destination")
    bars, data = descs[:1], descs[1:]
    b = sim.bar(bars[0], op)
    a = sim.access(th, op, data[0], True, "tma-load", barrier=b.key)
    nbytes = sim.k_md(data[0]).size
    if a is None:                    # not aliased: still counts towards its barrier's bytes
        sim.uids += 1
        a = Access(op, sim.env[sim.s.key(data[0])], True, "tma-load", th, tuple(th.trail), sim.steps, uid=sim.uids)
    b.pending.append(("tma", a, nbytes, dict(th.vc)))
    sim.log(th, "  (its {} bytes count towards {}, phase {})", nbytes, b.key, b.phase)


def _tma_store(sim, th, op):
    if not sim._pred(op):
        return
    for v in sim.descs(op):
        a = sim.access(th, op, v, False, "tma-store")
        th.store_seq += 1
        th.stores.append((th.store_seq, a))


def _store_wait(sim, th, op):
    n = sim.once(op, "pendings", _pendings)
    key = ("stores", th.tid)            # TMA stores of one thread retire in order (bulk groups)
    while len(th.stores) > n:
        seq, a = th.stores.pop(0)
        if a is not None:
            sim.complete(a, (key, seq))
        th.vc[key] = max(th.vc.get(key, 0), seq)
    sim.log(th, "tma.store_wait({}) at {}", n, sim.src(op))


def _is_async(op) -> bool:
    return "isAsync = true" in str(op.attributes) or _attr_str(op, "isAsync") == "true"


def _wgmma(sim, th, op):
    is_async = sim.once(op, "isAsync", _is_async)
    group = []
    for v in sim.descs(op):
        a = sim.access(th, op, v, False, "wgmma" if is_async else "sync")
        if a is not None:
            group.append(a)
    if is_async:
        th.wg_seq += 1
        th.wgmma.append((th.wg_seq, group))


def _wgmma_wait(sim, th, op):
    n = sim.once(op, "pendings", _pendings)
    key = ("wgmma", th.tid)             # wgmma groups of one thread retire in order
    while len(th.wgmma) > n:
        seq, group = th.wgmma.pop(0)
        for a in group:
            sim.complete(a, (key, seq))
        th.vc[key] = max(th.vc.get(key, 0), seq)
    sim.log(th, "warpgroup_mma_wait({}) at {}", n, sim.src(op))


def _pipelined(a: Access, b: Access) -> bool:
    """Whether PTX orders `a`, of an MMA one thread issued, before `b`, of the same or a later MMA of that thread.
    Asynchronous tcgen05 operations may run and complete out of issue order; the pairs PTX pipelines ("tcgen05
    pipelined instructions") are an MMA after an MMA of the same accumulator (address) and shape, and a later
    MMA's D writes after an earlier one's A reads. An MMA into other columns, whose D overlaps an earlier MMA's D or
    A, is not ordered after it (P7 took every MMA of a thread as run in issue order: a helper's chain writing
    overlapping columns of two accumulators, with no wait between, was "proven")."""
    return a.seq == b.seq or (a.role == b.role == "d" and a.chain is not None and a.chain == b.chain) or \
        (a.role == "a" and b.role == "d" and b.write)


def _segments(op):
    try:
        text = str(op.attributes["operandSegmentSizes"])
    except KeyError:
        return None
    return [int(x) for x in re.findall(r"-?\d+", text.split(":", 1)[1])]


def _tcgen05_operands(sim, op):
    """(A, B, D, use_acc or None, predicate or None, barriers, their predicates, which of A/B/D are
    descriptors)."""
    seg, ops = _segments(op), sim.s.canon(op.operands)
    if seg is None or len(seg) != 8:
        raise Stop(f"{op.name} at {sim.src(op)}: unexpected operands (operandSegmentSizes {seg})")
    starts = [sum(seg[:k]) for k in range(8)]
    abd = (ops[starts[0]], ops[starts[1]], ops[starts[2]])
    return (*abd, ops[starts[4]] if seg[4] else None, ops[starts[5]] if seg[5] else None,
            ops[starts[6]: starts[6] + seg[6]], ops[starts[7]: starts[7] + seg[7]],
            [_is_desc(v, sim.s.desc_types) for v in abd])


def _tcgen05(sim, th, op):
    """A tcgen05 MMA runs asynchronously, with or without `mbarriers=` and whatever its `is_async` says: Gluon's
    pipeline lowers no MMA to a synchronous one (Triton's MMA lowering pass, which does, runs only for `tl.dot`;
    a Gluon `tcgen05_mma` without barriers is a bare `tcgen05.mma` in the PTX), so only a later commit or its
    barriers complete it."""
    a_v, b_v, d_v, acc_v, pred_v, bars, bpreds, is_desc = sim.once(
        op, "tcgen05", lambda op: _tcgen05_operands(sim, op))
    env, key = sim.env, sim.s.key
    pred = env.get(key(pred_v)) if pred_v is not None else True
    if pred is None:
        raise Stop(f"the predicate of {op.name} at {sim.src(op)} cannot be computed by this run")
    if not pred:
        return
    th.mma_seq += 1
    group = []
    uses = [(a_v, False, is_desc[0], "a"), (b_v, False, is_desc[1], "b")]
    acc = env.get(key(acc_v)) if acc_v is not None else False
    if acc is None and is_desc[2] and (d := sim.foot(d_v, op)) is not None and sim.aliased(d.alloc):
        raise Stop(f"whether {op.name} at {sim.src(op)} accumulates (its use_acc) cannot be computed by this run, "
                   f"and its D shares bytes: whether it reads {d.label} is not followed")
    if acc:                          # it accumulates: it reads D, which must still be D's data
        uses.append((d_v, False, is_desc[2], "d"))
    uses.append((d_v, True, is_desc[2], "d"))
    d = env.get(key(d_v))
    shape = sim.once(op, "tcgen05-shape", lambda op: (str(d_v.type), str(a_v.type)))   # printed once, not per step
    chain = (d.alloc.name, d.lo, d.hi, d.box, shape) if isinstance(d, Foot) else None
    for v, w, desc, role in uses:
        if desc:
            a = sim.access(th, op, v, w, "tcgen05", seq=th.mma_seq, role=role, chain=chain)
            if a is not None:
                group.append(a)
    if not group:
        sim.uids += 1
        group = [Access(op, None, False, "tcgen05", th, tuple(th.trail), sim.steps, seq=th.mma_seq, uid=sim.uids)]
    th.mmas.append(group)
    for bv, pv in zip(bars, bpreds or [None] * len(bars)):
        if pv is not None and not env.get(key(pv)):
            if env.get(key(pv)) is None:
                raise Stop(f"a barrier predicate of {op.name} at {sim.src(op)} cannot be computed")
            continue
        b = sim.bar(bv, op)
        b.pending.append(("mma", th, th.mma_seq + 1, dict(th.vc)))


def _commit(sim, th, op):
    if not sim._pred(op):
        return
    descs = sim.descs(op)
    b = sim.bar(descs[0], op)
    b.pending.append(("mma", th, th.mma_seq + 1, dict(th.vc)))
    sim.log(th, "tcgen05_commit on {} at {}", b.key, sim.src(op))


ACCESS = {
    "ttg.local_load": _sync, "ttg.local_store": _sync, "ttng.tmem_load": _sync, "ttng.tmem_store": _sync,
    "ttng.async_tma_copy_global_to_local": _tma_load, "ttng.async_tma_copy_local_to_global": _tma_store,
    "ttng.async_tma_store_wait": _store_wait, "ttng.warp_group_dot": _wgmma, "ttng.warp_group_dot_wait": _wgmma_wait,
    "ttng.tc_gen5_mma": _tcgen05, "ttng.tc_gen5_commit": _commit,
}
NO_MEMORY -= set(ACCESS)


def _no_step(sim, th, op):
    """Nothing to do: a scalar op (its fast step did it) or an op that touches no memory."""


_BLOCKING = {"scf.for", "scf.if", "scf.while", ttg.WS, "ttng.wait_barrier"}


def _step_of(name: str):
    """How `Sim.block` runs an op that is not a scalar step: its handler (sim, thread, op), or None for an op
    that may block (`Sim.op`, a generator)."""
    if name == "arith.select":       # of descriptors (other selects are scalar steps)
        return Sim._select_desc
    if name in _BLOCKING:
        return None
    if name in ("ttg.local_alloc", "ttng.tmem_alloc"):
        return Sim._alloc
    if name in DESC:
        return Sim._desc
    if name in BARRIER_OPS:
        return Sim._barrier
    if name in ACCESS:
        return ACCESS[name]
    if name in NO_MEMORY:
        return _no_step
    return Sim._untimed


# ---------------------------------------------------------------------------------------------- verdicts

FIX_P7 = {
    "tma-load": "wait on the load's mbarrier (`mbarrier.wait(bar, phase)` with the parity of the phase its bytes "
                "complete) before these bytes are accessed again",
    "tma-bytes": "make each phase's `mbarrier.expect` count every byte its TMA loads bring (the sum of their "
                 "blocks' `nbytes`), no fewer",
    "tma-store": "retire the TMA store with `tma.store_wait(0)` (or a count that covers it) before these bytes "
                 "are accessed again",
    "wgmma": "retire the wgmma with `warpgroup_mma_wait(0)` (or a count that covers it) before these bytes "
             "are accessed again",
    "tcgen05": "wait on an mbarrier the MMA arrives on (`mbarriers=[...]`, or a `tcgen05_commit` after it) "
               "before these bytes are accessed again",
    "sync": "make the second partition wait on an mbarrier that the first one arrives on after its access (and "
            "check the wait's phase parity)",
    "clobber": "finish with the first view's data before the other view writes over it, or give the two buffers "
               "bytes of their own (a `distinct` reuse group, or an allocation without reuse=)",
}


def _who(sim, x: Access) -> str:
    verb = "write" if x.write else "read"
    where = _iters(x.trail)[2:-1]   # " (iteration 0 of the loop at ...)" without its brackets
    return f"{verb} of {x.foot.label} by {x.op.name} at {sim.src(x.op)} ({x.thread.name}{where and ', ' + where})"


CHECK_P7 = "accesses to shared bytes ordered by the kernel's synchronization"
FIX_UNEXERCISED = ("P7 needs a run in which two views reach the shared bytes: keep the loops and branches that lead "
                   "there computable from the integer arguments, and taken at the values P7 runs (README, P7)")


DEADLOCK = "the run deadlocks"
FIX_DEADLOCK = ("check each wait the run names: its mbarrier's index and phase parity, and that some thread arrives "
                "on it (an expect, an arrive, a TMA load or MMA that signals it) before the wait is reached: every "
                "run hangs (a wait dropped elsewhere can leave the order in which threads run such that one hangs)")


FIX_NEVER_RAN = ("P7 runs each integer argument at the values of its runs, as program 0 of 1 and 1 of 2: make the "
                 "branch that holds the access depend on what those runs take, or check the access by hand and set "
                 "TLX_ALIAS_PROOF=warn (README, P7)")


SIGNALS = {"ttng.arrive_barrier", "ttng.barrier_expect", "ttng.tc_gen5_commit", "ttng.async_copy_mbarrier_arrive"}
MMAS = {"ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"}   # signal where they take an mbarrier (`mbarriers=`)


def _never_ran(kernel, alloc, sims) -> list:
    """The ops that no completed run executed and that access `alloc` (read from the model) or signal an
    mbarrier (an arrive, an expect, a commit, an MMA with `mbarriers=`: it may complete a phase early, and so
    order less than the runs saw)."""
    ops = [op for op, names in kernel.touches.items()
           if alloc.name in names and (op.name in ACCESS or op.name in BARRIER_OPS)] + _signals(kernel)
    return [op for op in dict.fromkeys(ops) if not _executed(op, sims)]


def _executed(op, sims) -> bool:
    """Did one of `sims` execute `op`? (A run holds the ops it ran by the id of the walk's wrapper: `_scalars_read`.)"""
    if not sims:
        return False
    k = id((sims[0].s.ops.get(op) or (op,))[0])
    return any(k in s.ran for s in sims)


DIRECTED_RUNS = 4      # runs a proof aims at never-run ops (of at most DIRECTED_OPS solved for)
DIRECTED_OPS = 16
DIRECTED_MAX = 512     # the largest argument value and grid size such a run takes


def _directed(kernel, path, budget, made, ops, sims) -> list:
    """Runs aimed at ops no run executed (a branch on `pid_n > pid_m`, on `pid_k == SPLIT_K - 1`, on arguments
    apart): Z3 solves an op's path condition (the proof's encoding of the branches and loop ranges above it,
    with the kernel's facts) for the integer arguments in [1, DIRECTED_MAX] and a program id per axis below
    the grid's size, and a run takes those values. The runs that complete join the others; one that does
    not, or that misses its op anyway (the encoding approximates loop-carried values), adds nothing."""
    enc, out = kernel.enc, []
    ctx = enc.ctx
    terms = [enc.val(a) for a in _int_args(kernel, used=True)]
    if any(t is None or not z3.is_int(t) for t in terms):
        return out
    axes = [[z3.Int(f"p7.{what}{axis}", ctx) for what in ("pid", "nprog")] for axis in range(3)]
    same = []   # one program per axis in a run: every program-id variable of the axis takes its value
    for (pids, nprogs), (pid, nprog) in zip(enc.program_vars().values(), axes):
        same += [v == pid for v in pids] + [v == nprog for v in nprogs]
    bounds = [z3.And(1 <= t, t <= DIRECTED_MAX) for t in terms] + [
        z3.And(0 <= p, p < n, n <= DIRECTED_MAX) for p, n in axes]
    tried = set()   # (arguments, program) of the runs made: two ops one model reaches share a run
    for op in ops[:DIRECTED_OPS]:
        if len(tried) == DIRECTED_RUNS or _executed(op, sims + out):
            continue
        cond = enc.path_condition(op)   # (may add facts: the solver is asked for after it)
        solver = enc.solver(1)
        solver.push()
        try:
            solver.add(cond, *same, *bounds)
            if solver.check() != z3.sat:
                continue
            m = solver.model()
            value = lambda t: m.eval(t, model_completion=True).as_long()   # noqa: E731
            program = tuple(tuple(value(v[k]) for v in axes) for k in (0, 1))
            values = tuple(value(t) for t in terms)
        finally:
            solver.pop()
        if (values, program) in tried:
            continue
        tried.add((values, program))
        sim = Sim(kernel, values, path, budget, program)
        made.append(sim)
        if _outcome(sim) is None:
            out.append(sim)
    return out


def _signals(kernel) -> list:
    """The ops of the kernel that arrive on an mbarrier (`SIGNALS`, and `MMAS` with an mbarrier operand)."""
    cache = kernel.__dict__.setdefault("_p7_signals", [])
    if not cache:
        seen = {}
        cache.append([op for op in _ops(kernel) if op.name in SIGNALS or (
            op.name in MMAS and any(_is_barrier_type(v, seen) for v in op.operands))])
    return cache[0]


def _fix_unexercised(shrunk, budget) -> str:
    """FIX_UNEXERCISED, and where runs were cut short by the op budget, the knob that lets them complete."""
    if not shrunk:
        return FIX_UNEXERCISED
    return (f"{FIX_UNEXERCISED}; the runs with {', '.join(map(str, shrunk))} used up the budget of {budget} ops a "
            f"run and smaller arguments ran instead: {ENV_STEPS}=<ops> lets them complete (a run's time grows with it)")


def _cannot_prove(alloc, detail, fix, **data) -> Verdict:
    return Verdict("P7", alloc.name, UNKNOWN, CHECK_P7, detail, alloc.src, fix, data=data)


REINTERPRET = "reinterpret@"   # the tenant key of a reinterpret that is no TLX view (`_tenant_key`)


def _placed_views(alloc) -> list:
    """The views of `alloc` that place bytes of their own: not the spec's backing itself, and not a transpose or
    reshape (those are their source's bytes, seen another way)."""
    return [v for v in alloc.views if not v.backing and v.origin != "view"]


def _slice_box(src: Foot, offsets: list, shape: list, frame: tuple) -> tuple | None:
    """The elements a slice of `src` covers: (offsets, shape, frame), the frame being the whole shape and
    memdesc type of the exact view it slices (elements of one frame sit at the same bytes: a permuted view's
    do not); None where that is not known (a slice of an inexact view that is no slice)."""
    if len(offsets) != len(shape) or len(shape) != len(frame[0]):
        return None
    if src.exact:
        return tuple(offsets), tuple(shape), frame
    if src.box is None or len(src.box[0]) != len(offsets):
        return None
    return tuple(o + p for o, p in zip(src.box[0], offsets)), tuple(shape), src.box[2]


def _tile(f: Foot) -> tuple:
    """The bytes an inexact slice lies in and the frame of its elements (slices of one tile group by it)."""
    return f.lo, f.hi, f.box[2] if f.box is not None else None


def _covers(boxes: list, whole: tuple) -> bool:
    """Do the boxes (offsets, shape) cover every element of an array of shape `whole`? A slice's bytes are not
    followed (swizzled layouts scatter them), its elements are: boxes that cover every element cover every byte."""
    cuts = [sorted({0, n} | {min(max(o[d], 0), n) for o, _ in boxes} | {min(max(o[d] + s[d], 0), n) for o, s in boxes})
            for d, n in enumerate(whole)]
    cells = product(*[list(zip(c, c[1:])) for c in cuts])
    return all(any(all(o[d] <= lo and hi <= o[d] + s[d] for d, (lo, hi) in enumerate(cell)) for o, s in boxes)
               for cell in cells)


def _declared(f: Foot) -> bool:
    """Is `f` seen through a buffer the kernel declared in a spec (a TLX view), not the backing itself or a
    reinterpret? Only such buffers promise not to be live while another overwrites their bytes."""
    return bool(f.alloc.spec) and f.tenant != f.alloc.name and not f.tenant.startswith(REINTERPRET)


def _tenant_key(op) -> str:
    """The tenant a reinterpret makes: its TLX view (`tlx.alloc`), else the op itself (the allocation's own
    tenant is its name)."""
    op = getattr(op, "operation", op)
    return _attr_str(op, "tlx.alloc") or f"{REINTERPRET}{hash(op)}"


def _accessed_tenants(kernel, alloc) -> list:
    """The tenants of `alloc` some op of the kernel accesses, read from the model, as (the keys a run names it
    by, how to name it, whether it shares bytes with another of them by declaration): the allocation and its
    reinterprets (a slice or a transpose is its source's), and each reinterpret of one buffer, accessed
    through it or what is derived from it. A view accessed only through reinterprets of its buffers
    (`c.index(0).reinterpret(bf16)`) is reached where one of them is (each is a tenant of its own too)."""
    views = [v for v in alloc.views if v.accessed_at and not v.backing and v.origin in ("alloc", "reinterpret")]
    out = []
    for v in views:
        keys = {alloc.name} if v.origin == "alloc" else {_tenant_key(op) for op in v.makers}
        if not v.accessed_itself:
            keys |= {_tenant_key(b.op) for b in alloc.subs
                     if b.view is v and b.borrow and b.op.name == "ttg.memdesc_reinterpret"}
        shares = (not alloc.spec or v.no_tree or not v.alloc_id
                  or any(reuse_relation(kernel, alloc, v, w)[0] != "distinct" for w in views
                         if w.alloc_id and w.alloc_id != v.alloc_id))
        out.append((keys, f"{v.name} at {v.accessed_at}", shares))
    for b in alloc.subs:   # a reinterpret of one buffer lies on bytes of another tenant: it always shares
        if b.borrow and b.op.name == "ttg.memdesc_reinterpret" and any(
                x.accessed and _borrowed_by(x, b) for x in alloc.subs):
            out.append(({_tenant_key(b.op)}, f"{b.name} (made at {b.src})", True))
    return out


def _borrowed_by(sub, borrow) -> bool:
    """Is `sub` the reinterpret `borrow` or derived from it?"""
    while sub is not None:
        if sub is borrow:
            return True
        sub = sub.parent
    return False


def _declares_sharing(kernel, alloc) -> bool:
    """Do two tenants of `alloc` share bytes by declaration? A hand-aliased buffer when one buffer is borrowed (a
    reinterpret lies on what it borrows) or two views it is accessed through overlap (the halves of a buffer
    cut with `.slice` do not); a TLX spec when two of its buffers meet in a group of its reuse tree that is not
    `distinct`, or it has no tree (TLX's default: every buffer from offset 0). A spec whose tree is `distinct`
    throughout shares nothing, and runs that order no pair of its accesses are what P3-P5 predict."""
    if not alloc.spec:   # hand-aliased: a borrow lies on what it borrows; views (slices) where two overlap
        if any(s.borrow for s in alloc.subs):
            return True
        seen = [v for v in _placed_views(alloc) if v.accessed_at]
        return any(not (v.exact and w.exact) or (v.offset < w.offset + w.extent and w.offset < v.offset + v.extent)
                   for k, v in enumerate(seen) for w in seen[k + 1:])
    views = [v for v in alloc.views if v.alloc_id and not v.backing]
    if any(v.no_tree for v in views):
        return len({v.alloc_id for v in views}) > 1
    return any(reuse_relation(kernel, alloc, a, b)[0] != "distinct"
               for k, a in enumerate(views) for b in views[k + 1:] if a.alloc_id != b.alloc_id)


def p7_temporal(kernel, path=None, runs=None) -> list:
    """P7 verdicts for the aliased allocations of one kernel (none when nothing shares bytes)."""
    made = []
    try:
        return _p7(kernel, path, runs, made)
    finally:
        for sim in made:   # a run's accesses, threads and clocks refer to each other: garbage only a full
            sim.close()    # collection frees, which later compiles paid for (the demo's compile 2x slower)


def _p7(kernel, path, runs, made) -> list:
    probe, budget = Sim(kernel, 0, path), step_budget()
    made.append(probe)
    aliased = [a for a in kernel.allocs if probe.aliased(a)]
    if not aliased:   # nothing shares bytes: no pair to order, no verdict, so no run (they cost up to ~1 s)
        return []
    sims, stopped, shrunk, hung, skipped = [], None, [], [], []
    ran = {}                         # key -> the completed run of that key (`Sim.key`)
    for value in runs or RUNS:
        # a value at or above one whose run used up the budget would use it up too (the arguments drive
        # the loops): go straight to its smaller values instead of spending a whole budget on each
        while shrunk and value >= min(shrunk) and value // 4 >= MIN_VALUE:
            skipped.append(value)
            value //= 4
        while True:
            sim = Sim(kernel, value, path, budget)
            key = sim.key()
            if key in ran:
                sim = ran[key].stand_in(value)
                break
            made.append(sim)
            try:
                sim.run()
            except Deadlock as exc:
                hung.append((value, str(exc), sim))
                sim = None
            except Budget:
                if value // 4 >= MIN_VALUE:       # loops driven by the arguments themselves: smaller values
                    shrunk.append(value)
                    value //= 4
                    continue
                stopped = (value, f"the run's budget of {budget} ops is used up ({ENV_STEPS}=<ops> raises it)", sim)
            except Stop as exc:
                stopped = (value, str(exc), sim)
            break
        if stopped:
            break
        if sim is not None and all(s.arg_value != value for s in sims):
            sims.append(sim)
            if key is not None:
                ran.setdefault(key, sim)
    if stopped is None and not sims and hung:
        stopped = hung[0]
    smallest = min((s.arg_value for s in sims), default=None)          # of the runs that completed
    program_hung, program_small = [], []
    if stopped is None and sims and program_dependent(kernel):   # each value that completed, as other programs
        # (not a value the op budget shrank to: it stands in for a larger one, and a persistent loop of loops
        # over budget would spend as much again as program 1 of 2: fa_tutorial_borrow_ok's proof 158 -> 225 ms)
        values = [s.arg_value for s in sims if s.arg_value in (runs or RUNS)]
        stopped, others, program_hung, program_small = _program_runs(kernel, path, budget, made, values,
                                                                     lambda v: PROGRAM_RUN)
        if stopped is None and any(_never_ran(kernel, a, sims + others) for a in aliased):
            # an op behind a branch on the program that programs 0 and 1 do not take (a causal attention's
            # unmasked blocks, from q block 2 on): the last program of a grid of `value` programs
            last = [v for v in values if (v - 1, v) not in ((0, 1), PROGRAM_RUN)]
            stopped, more, hung_more, small_more = _program_runs(kernel, path, budget, made, last,
                                                                 lambda v: (v - 1, v))
            others, program_hung, program_small = others + more, program_hung + hung_more, program_small + small_more
        sims += others
    if stopped is None and sims:   # ops still unrun: runs aimed at them
        unrun = list(dict.fromkeys(op for a in aliased for op in _never_ran(kernel, a, sims)))
        if unrun:
            sims += _directed(kernel, path, budget, made, unrun, sims)
    extra = _mixed(kernel, path, budget, made, sims) if stopped is None and sims and mixed_enabled() else ""

    hung_above = [h for h in hung if smallest is not None and h[0] > smallest]   # not a small-domain hang
    out = []
    if stopped is not None:
        value, why, sim = stopped
        fix = (FIX_DEADLOCK if why.startswith(DEADLOCK) else
               "P7 runs the kernel's control flow concretely: keep loop bounds and buffer indices computable from "
               "the integer arguments and use the ops of the model (README, P7)")
        for a in aliased:
            out.append(_cannot_prove(a, f"the bounded run (integer arguments = {value}) stopped: {why}", fix,
                                     trace=[sim.text(e) for e in list(sim.events)[-40:]]))
        return out
    for a in aliased:
        tenants = {}
        for sim in sims:
            tenants.update(sim.tenants.get(a.name, {}))
        bad = [(sim, v) for sim in sims for v in sim.violations if v.first.foot.alloc is a]
        seen, rows = set(), []
        for sim, v in bad:
            key = (v.first.op, v.second.op)
            if key in seen:
                continue
            seen.add(key)
            kind = v.kind
            detail = (f"{_who(sim, v.first)} and {_who(sim, v.second)} share {a.unit} [{v.lo}, {v.hi}): {v.why} "
                      f"(bounded run, integer arguments = {sim.label})")
            at = sim.where(v.second.op)[1] or "?"   # no location (TRITON_DISABLE_LINE_INFO=1): the allocation's line
            rows.append(Verdict("P7", a.name, VIOLATION, CHECK_P7, detail, a.src if at == "?" else at, FIX_P7[kind],
                                data={"views": [v.first.foot.label, v.second.foot.label],
                                      "lines": [sim.where(v.first.op)[1] or "?", sim.where(v.second.op)[1] or "?"],
                                      "ops": [v.first.op.name, v.second.op.name],
                                      "threads": [v.first.thread.name, v.second.thread.name],
                                      "range": [v.lo, v.hi],
                                      "trace": [sim.text(e) for e in v.trace[-60:]]}))
        if rows:
            out += rows
            continue
        for _, _, hs in hung + program_small:   # who shares the bytes: what a hung run saw before it hung counts too
            tenants.update(hs.tenants.get(a.name, {}))
        # a view the kernel accesses, sharing bytes with another, that no run reached: its accesses were never
        # ordered against anything (an epilogue tile behind a branch only larger arguments take)
        seen = _accessed_tenants(kernel, a)
        unreached = [label for keys, label, shares in seen if shares and not keys & tenants.keys()]
        if len(seen) > 1 and unreached and _declares_sharing(kernel, a):
            ran = _ran(sims) or "none completed"
            out.append(_cannot_prove(a, f"the kernel accesses {a.name} through {len(seen)} views, the runs (integer "
                                     f"arguments = {ran}) never reached {'; '.join(unreached)}: the sharing "
                                     "was never exercised", _fix_unexercised(shrunk, budget)))
            continue
        own = sum(sim.own.get(a.name, 0) for sim in sims)
        missed = [f"the {op.name} at {sims[0].src(op)}" for op in _never_ran(kernel, a, sims)] \
            if _declares_sharing(kernel, a) else []
        if len(tenants) < 2 and not own and not missed:   # fewer than two views touched it, none the runs missed
            continue                                      # shares bytes, no view met its own bytes: nothing to order
        if program_hung:   # program 0 of 1 completed with these arguments: the kernel hangs as another program
            _, why, sim = program_hung[0]
            label = sim.label
            out.append(_cannot_prove(a, f"the bounded run with integer arguments = {label} deadlocked, while the "
                                     f"run as program 0 of 1 completed: {why}",
                                     "check the barrier each wait observes (its index and phase) where it depends "
                                     "on the program id: the kernel hangs as a program other than 0"))
            continue
        if hung_above:
            # a kernel's domain is "arguments large enough" (fewer blocks than its prologue assumes hang it): a
            # deadlock at a value above one that completed is the kernel hanging where it should run
            value, why, _ = hung_above[0]
            out.append(_cannot_prove(a, f"the bounded run with integer arguments = {value} deadlocked, while the "
                                     f"run with {smallest} completed (not an argument too small for the kernel): {why}",
                                     "check the barrier each wait observes (its index and phase): the kernel hangs "
                                     "for these arguments"))
            continue
        checked = sum(sim.checked.get(a.name, 0) for sim in sims)
        if not checked and (hung or (_declares_sharing(kernel, a) and not any(a.name in s.met for s in sims))):
            ran = _ran(sims)
            if hung:
                # the runs that completed ordered nothing here, and the others hung: nothing was shown (a wait on a
                # barrier no one arrives on hangs every run long enough to reach the shared bytes)
                value, why, _ = hung[0]
                detail = (f"no overlapping accesses on the runs that completed (integer arguments = {ran}), and the "
                          f"run with {value} deadlocked: {why}")
                fix = ("check the barrier each wait observes (its index and phase): a run long enough to reach the "
                       "shared bytes hangs")
            else:
                # two views touched the allocation, never the same bytes, though the tree shares some: the sharing
                # was not exercised, so these runs show nothing about it (views that met only to read are fine)
                detail = (f"no two views accessed the same bytes on the runs (integer arguments = {ran}): the "
                          f"sharing was never exercised")
                fix = _fix_unexercised(shrunk, budget)
            out.append(_cannot_prove(a, detail, fix))
            continue
        if missed:
            # an access behind a branch no run took (a program id above 1, arguments apart, a loaded value): the
            # order it is in where the branch is taken was never seen ("proven" on a race under `if pid >= 2`)
            more = f" and {len(missed) - 3} more" if len(missed) > 3 else ""
            out.append(_cannot_prove(a, f"the runs (integer arguments = {_ran(sims)}) never ran "
                                     f"{'; '.join(missed[:3])}{more}, which access {a.name} or signal an "
                                     "mbarrier: what they order, or fail to, was never seen", FIX_NEVER_RAN))
            continue
        names = ", ".join(sorted(set(tenants.values())))
        note = f"; {', '.join(map(str, shrunk))} exceeded the run budget" if shrunk else ""
        note += f"; {', '.join(map(str, skipped))} not run (not below one that did)" if skipped else ""
        note += f"; {', '.join(str(h[0]) for h in hung)} deadlocked (below every run that completed: outside the " \
            "kernel's domain)" if hung else ""
        note += f"; {', '.join(h[2].label for h in program_small)} deadlocked (below every run as that program " \
            "that completed: outside the kernel's domain)" if program_small else ""
        note += extra
        out.append(Verdict("P7", a.name, PROVEN,
                           f"{checked} overlapping accesses of {names} ordered, and {own} of one view to its own "
                           f"bytes, on {len(sims)} bounded runs (integer arguments = {_ran(sims)}{note})"))
    return out


def _program_runs(kernel, path, budget, made, values, program_of):
    """Runs of `values` as the programs `program_of(value)`: (why one stopped or None, the runs that completed,
    the deadlocks at or above a value that completed or at every value (the kernel hanging where it should run),
    those below every value that completed (outside the kernel's domain, as for program 0: a persistent
    kernel's grid has no second program for one tile)); deadlocks as (value, why, run)."""
    done, hung, ran = [], [], {}
    for value in values:
        sim = Sim(kernel, value, path, budget, program_of(value))
        key = sim.key()
        if key in ran:
            done.append(ran[key].stand_in(value))
            continue
        made.append(sim)
        end = _outcome(sim)
        if end is None:
            done.append(sim)
            if key is not None:
                ran[key] = sim
        elif isinstance(end, Deadlock):
            hung.append((value, str(end), sim))
        else:   # its budget (program 0 of 1 completed in it) or a value it cannot compute: as any run's
            return (sim.label, str(end) if not isinstance(end, Budget) else
                    f"the run's budget of {budget} ops is used up ({ENV_STEPS}=<ops> raises it)", sim), done, [], []
    low = min((s.arg_value for s in done), default=None)
    return (None, done, [h for h in hung if low is None or h[0] > low],
            [h for h in hung if low is not None and h[0] < low])


def _ran(sims) -> str:
    """The runs' arguments as verdicts name them: `256, 384, 7; as program 1 of 2: 256, 384; as program n - 1
    of n: 256`."""
    first = ", ".join(s.label for s in sims if s.program == (0, 1))
    second = ", ".join(str(s.arg_value) for s in sims if s.program == PROGRAM_RUN)
    per_axis = [s for s in sims if isinstance(s.program[0], tuple)]
    last = ", ".join(str(s.arg_value) for s in sims
                     if s.program not in ((0, 1), PROGRAM_RUN) and s not in per_axis)
    return (first + (f"; as program {PROGRAM_RUN[0]} of {PROGRAM_RUN[1]}: {second}" if second else "")
            + (f"; as program n - 1 of n: {last}" if last else "")
            + (f"; aimed at an op the others did not run: {', '.join(s.label for s in per_axis)}"
               if per_axis else ""))


ENV_OFF = "TLX_ALIAS_P7"
ENV_STEPS = "TLX_ALIAS_P7_STEPS"


def step_budget() -> int:
    """Ops one run may execute: TLX_ALIAS_P7_STEPS, MAX_STEPS when unset. Anything but a positive integer is a
    TlxAliasError naming the knob (a misspelt budget must not silently mean the default)."""
    text = os.environ.get(ENV_STEPS, "").strip().replace("_", "")
    if not text:
        return MAX_STEPS
    if not text.isdigit() or int(text) <= 0:
        raise TlxAliasError(ENV_STEPS, f"{ENV_STEPS}={os.environ[ENV_STEPS]!r} is not a positive number of ops",
                            f"set {ENV_STEPS} to a positive integer (default {MAX_STEPS})")
    return int(text)


ENV_MIXED = "TLX_ALIAS_P7_MIXED"
MIXED = (256, 1)                     # a mixed run: every integer argument the first value but one, the second


def mixed_enabled() -> bool:
    """TLX_ALIAS_P7_MIXED=1: besides its runs, P7 runs each integer argument in turn at 1 with the others at 256
    (a persistent GEMM with one K block a tile and several tiles: a race no run of one value for all shows)."""
    text = os.environ.get(ENV_MIXED, "0").strip().lower()
    if text not in ("0", "1", "off", "on", ""):
        raise TlxAliasError(ENV_MIXED, f"{ENV_MIXED}={os.environ[ENV_MIXED]!r} is neither 1 nor 0",
                            f"set {ENV_MIXED}=1 to add the mixed runs, or unset it")
    return text in ("1", "on")


def _mixed(kernel, path, budget, made, sims) -> str:
    """The mixed runs (`mixed_enabled`): each that completes joins `sims` (its violations count like any run's);
    one that deadlocks or uses up its budget is left out, and the note returned says so."""
    n = len(_int_args(kernel, used=True))   # (a descriptor's shape and strides are arguments nothing reads)
    big, small = MIXED
    left = []
    for k in range(n if n > 1 else 0):
        values = tuple(small if i == k else big for i in range(n))
        sim = Sim(kernel, values, path, budget)
        made.append(sim)
        end = _outcome(sim)
        if end is None:
            sims.append(sim)
        elif isinstance(end, (Deadlock, Budget)):
            left.append(f"{values} {'deadlocked' if isinstance(end, Deadlock) else 'used up its budget'}")
        else:
            left.append(f"{values} stopped: {end}")
    return f"; not counted: {', '.join(left)}" if left else ""


# TMA copies read their integer operands as coordinates (addresses: the program id reaches nothing a run reads
# through them); an i1 operand, the predicate, counts.
_TMA_COORDS = {"ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global",
               "ttng.async_tma_reduce", "ttng.async_tma_gather", "ttng.async_tma_scatter"}


def _tma_coordinate(name, v) -> bool:
    """Is the integer operand `v` of an op named `name` a TMA copy's coordinate (an address: no run reads it)?
    A copy's i1 operand is its predicate, which a run reads."""
    return name in _TMA_COORDS and str(v.type) != "i1"


def program_dependent(kernel) -> bool:
    """Does `tt.get_program_id` or `tt.get_num_programs` reach anything a run reads, through scalar arithmetic,
    other than addresses? A non-persistent GEMM's program id only offsets its TMA coordinates: as program 1 of 2
    its runs are program 0's, op for op. A loop bound, a branch, a buffer index, a phase, a predicate, a value
    carried (anything not known to be an address) makes it dependent; a warp_specialize capture is followed into
    each partition."""
    cache = kernel.__dict__.setdefault("_p7_program_dependent", [])
    if cache:
        return cache[0]
    todo = [r for op in _ops(kernel) if op.name in ("tt.get_program_id", "tt.get_num_programs") for r in op.results]
    seen, dependent, data, scalars = set(), False, {}, {}
    while todo and not dependent:
        v = todo.pop()
        for use in v.uses:
            user = _op(use.owner)
            results = list(user.results)
            if _scalar_op(user.name, results, scalars):   # (an op with an operand: no constant, no program id)
                todo += [r for r in results if r not in seen]
                seen.update(results)
            elif user.name in (ttg.WS, ttg.WS_PARTITIONS):   # a capture: what it is inside each partition
                inside = [a for a in ttg.partition_args(user, use.operand_number) if a not in seen]
                todo += inside
                seen.update(inside)
            elif _tma_coordinate(user.name, v):
                continue
            elif results and not len(user.regions) and user.name not in ACCESS and user.name not in BARRIER_OPS \
                    and all(_is_data(r, data) for r in results):
                continue
            else:
                dependent = True
                break
    cache.append(dependent)
    return dependent


def _ops(kernel) -> list:
    """Every op of the kernel's function (`Kernel.ops`, walked once by the model; walked here where a kernel was
    made without it)."""
    if not kernel.ops:
        kernel.func.walk(lambda op: (kernel.ops.append(_op(op)), ir.WalkResult.ADVANCE)[1], ir.WalkOrder.PRE_ORDER)
    return kernel.ops


def _is_data(v, seen: dict) -> bool:
    """A tensor or a pointer: what P7 never computes (tensor arithmetic, global memory). `seen`: answers by type."""
    return per_type(seen, v.type, lambda text: text.startswith("tensor<") or text.startswith("!tt.ptr"))


def _int_args(kernel, used=False) -> list:
    """The kernel's integer arguments, which a run sets (pointers and descriptors it does not follow); `used`:
    only those some op reads."""
    cache = kernel.__dict__.setdefault("_p7_int_args", {})   # read once: every run sets them
    if used not in cache:
        cache[used] = [a for a in kernel.func.regions[0].blocks[0].arguments
                       if str(a.type) in ("i32", "i64", "index", "i16", "i8") and (not used or any(True for _ in a.uses))]
    return cache[used]


def _outcome(sim) -> Stop | None:
    """Run `sim`: None when it completed, else why it stopped (a Deadlock, the Budget used up, another Stop)."""
    try:
        sim.run()
    except Stop as exc:
        return exc
    return None


def enabled() -> bool:
    """P7 runs unless TLX_ALIAS_P7=off (TLX_ALIAS_PROOF=off turns off the whole proof)."""
    return os.environ.get(ENV_OFF, "on").strip().lower() not in ("off", "0", "no")
