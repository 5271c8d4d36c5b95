"""Bounded concrete execution: a witness for an index the proof could not bound.

When P5 cannot prove an index in range because it depends on values the proof knows only through their
loop invariants (a ring counter carried through a loop nest), the kernel's integer program is run
concretely: program 0 of 1, kernel arguments from the solver's counterexample and then a few larger
values, each run bounded in steps. An out-of-range index observed on such a run happened on a real
execution, so the verdict becomes a violation, with the loop iterations and counter values that lead
there. A run stops (without a verdict) at a value it cannot compute: a load, an op without an evaluator
below, a loop bound that depends on one. One evaluator per integer op, keyed by op name (`EVAL`).
"""
from __future__ import annotations

from dataclasses import dataclass

from tlx_alias import ttg
from tlx_alias._mlir import terminator

from .encode import _attr_int, loc_info

MAX_STEPS = 20_000         # ops executed per run
MAX_TRIPS = 256            # iterations of one loop per entry


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _u(x, w):
    return x % (1 << w)


_CMP = {0: lambda a, b, w: a == b, 1: lambda a, b, w: a != b, 2: lambda a, b, w: a < b, 3: lambda a, b, w: a <= b,
        4: lambda a, b, w: a > b, 5: lambda a, b, w: a >= b, 6: lambda a, b, w: _u(a, w) < _u(b, w),
        7: lambda a, b, w: _u(a, w) <= _u(b, w), 8: lambda a, b, w: _u(a, w) > _u(b, w),
        9: lambda a, b, w: _u(a, w) >= _u(b, w)}

# One evaluator per integer op: f(op, operand values, width of operand 0) -> int / bool.
EVAL = {
    "arith.addi": lambda op, a, w: a[0] + a[1],
    "arith.subi": lambda op, a, w: a[0] - a[1],
    "arith.muli": lambda op, a, w: a[0] * a[1],
    "arith.divsi": lambda op, a, w: _tdiv(a[0], a[1]),
    "arith.remsi": lambda op, a, w: a[0] - a[1] * _tdiv(a[0], a[1]),
    "arith.divui": lambda op, a, w: _u(a[0], w) // _u(a[1], w),
    "arith.remui": lambda op, a, w: _u(a[0], w) % _u(a[1], w),
    "arith.floordivsi": lambda op, a, w: a[0] // a[1],
    "arith.ceildivsi": lambda op, a, w: -((-a[0]) // a[1]),
    "arith.ceildivui": lambda op, a, w: -((-_u(a[0], w)) // _u(a[1], w)),
    "arith.minsi": lambda op, a, w: min(a[0], a[1]),
    "arith.maxsi": lambda op, a, w: max(a[0], a[1]),
    "arith.minui": lambda op, a, w: a[0] if _u(a[0], w) <= _u(a[1], w) else a[1],
    "arith.maxui": lambda op, a, w: a[0] if _u(a[0], w) >= _u(a[1], w) else a[1],
    "arith.andi": lambda op, a, w: a[0] & a[1],
    "arith.ori": lambda op, a, w: a[0] | a[1],
    "arith.xori": lambda op, a, w: a[0] ^ a[1],
    "arith.shli": lambda op, a, w: a[0] << a[1],
    "arith.shrsi": lambda op, a, w: a[0] >> a[1],
    "arith.shrui": lambda op, a, w: _u(a[0], w) >> a[1],
    "arith.select": lambda op, a, w: a[1] if a[0] else a[2],
    "arith.cmpi": lambda op, a, w: comparison(op)(a[0], a[1], w),
    "arith.extsi": lambda op, a, w: a[0],
    "arith.trunci": lambda op, a, w: a[0],
    "arith.index_cast": lambda op, a, w: a[0],
    "arith.index_castui": lambda op, a, w: _u(a[0], w),
    "arith.extui": lambda op, a, w: int(a[0]) if isinstance(a[0], bool) else _u(a[0], w),
    "arith.bitcast": lambda op, a, w: a[0],
}


def comparison(op):
    """What an `arith.cmpi` computes: f(a, b, width), its predicate read from the op (P7 reads it once per op)."""
    return _CMP[_attr_int(op, "predicate")]


def constant_value(op):
    """The value an `arith.constant` gives a run (int or bool), or None (not an integer)."""
    text = str(op.attributes["value"]).split(":")[0].strip()
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return None


class Stop(Exception):
    """The run cannot go on (a value it cannot compute, or its budget)."""


@dataclass
class Seen:
    """An index one run computed for a `ttg.memdesc_index` op, and where the run was."""
    values: dict                     # SSA value -> int at that moment (the index and what it is made of)
    trail: tuple                     # ((loop location, iteration, {counter name: value}), ...) outermost first
    preds: list = None               # the `pred` of each predicated op that used the selected buffer


def _op(x):
    return getattr(x, "operation", x)


def _width(v) -> int:
    t = str(v.type)
    return 64 if t == "index" else int(t[1:]) if t[1:].isdigit() else 64


class Bindings:
    """Values of SSA names in `self.env` across region boundaries (loop-carried, yielded, captured): shared by
    the concrete run here and P7's run (`temporal.Sim`), which follow scf/warp_specialize the same way."""

    def _bind(self, values, targets):
        for v, t in zip(values, targets):
            if v is not None:
                self.env[t] = v
            else:
                self.env.pop(t, None)

    def _yielded(self, block, start=0):
        term = terminator(block)
        return [self.env.get(v) for v in list(term.operands)[start:]]


class Run(Bindings):
    """One concrete run of a kernel's integer program; `seen[op]` lists what each index op computed."""

    def __init__(self, func, args: dict, pid: int = 0, nprog: int = 1, watch=None, path=None):
        self.env, self.steps, self.trail, self.path = {}, 0, [], path
        self.pid, self.nprog = pid, nprog
        self.watch = watch or {}          # memdesc_index op -> SSA values to record with it
        self.seen: dict = {}
        body = func.regions[0].blocks[0]
        for k, a in enumerate(body.arguments):
            if k in args:
                self.env[a] = args[k]

    def go(self, func):
        try:
            self.block(func.regions[0].blocks[0])
        except (Stop, ZeroDivisionError, KeyError, TypeError, ValueError, OverflowError):
            pass
        return self

    def val(self, v):
        if v not in self.env:
            raise Stop(f"no value for {v}")
        return self.env[v]

    def block(self, block):
        for op in list(block.operations):
            self.op(_op(op))

    def op(self, op):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Stop("step budget")
        name = op.name
        if name == "arith.constant":
            value = constant_value(op)
            if value is not None:
                self.env[op.results[0]] = value
        elif name in EVAL:
            try:
                args = [self.env[a] for a in op.operands]
            except KeyError:
                return                      # an input it cannot compute: so is this value
            self.env[op.results[0]] = EVAL[name](op, args, _width(op.operands[0]))
        elif name == "tt.get_program_id":
            self.env[op.results[0]] = self.pid if (_attr_int(op, "axis") or 0) == 0 else 0
        elif name == "tt.get_num_programs":
            self.env[op.results[0]] = self.nprog if (_attr_int(op, "axis") or 0) == 0 else 1
        elif name in ("scf.for", "scf.if", "scf.while", ttg.WS):
            getattr(self, "_" + name.split(".")[-1])(op)
        elif name == "ttg.memdesc_index" and op in self.watch:
            self.seen.setdefault(op, []).append(
                Seen({v: self.env.get(v) for v in self.watch[op]}, tuple(self.trail), []))
        elif name in ttg.PREDICATED_OPS:
            pred_v = ttg.pred_operand(op)
            pred = self.env.get(pred_v) if pred_v is not None else None
            for a in op.operands:
                owner = _op(a.owner) if not hasattr(a, "arg_number") else None
                if owner is not None and owner in self.seen:
                    self.seen[owner][-1].preds.append(pred)

    def _for(self, op):
        lb, ub, step = (self.val(op.operands[i]) for i in range(3))
        body = op.regions[0].blocks[0]
        state = [self.env.get(v) for v in list(op.operands)[3:]]
        where = loc_info(op.location, self.path)[1] or "?"
        iv, trips = lb, 0
        while iv < ub:
            trips += 1
            if trips > MAX_TRIPS:
                raise Stop("trip budget")
            self._bind([iv] + state, list(body.arguments))
            self.trail.append((where, trips - 1, self._counters(body, 1, iv)))
            self.block(body)
            self.trail.pop()
            state = self._yielded(body)
            iv += step
        self._bind(state, list(op.results))

    def _counters(self, block, start, iv=None):
        out = {} if iv is None else {"iv": iv}
        for k, a in enumerate(list(block.arguments)[start:]):
            if a in self.env and not isinstance(self.env[a], bool):
                name = loc_info(a.location, self.path)[0] or f"iter_arg {k}"
                out[name] = self.env[a]
        return out

    def _if(self, op):
        cond = self.val(op.operands[0])
        region = op.regions[0] if cond else op.regions[1]
        if not len(region.blocks):
            return
        self.block(region.blocks[0])
        self._bind(self._yielded(region.blocks[0]), list(op.results))

    def _while(self, op):
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        state = [self.env.get(v) for v in op.operands]
        where = loc_info(op.location, self.path)[1] or "?"
        for trip in range(MAX_TRIPS + 1):
            self._bind(state, list(before.arguments))
            self.block(before)
            cond = self.val(terminator(before).operands[0])
            forwarded = self._yielded(before, 1)
            if not cond:
                self._bind(forwarded, list(op.results))
                return
            self._bind(forwarded, list(after.arguments))
            self.trail.append((where, trip, self._counters(after, 0)))
            self.block(after)
            self.trail.pop()
            state = self._yielded(after)
        raise Stop("trip budget")

    def _warp_specialize(self, op):
        """Each partition in turn: the integers a partition computes depend only on its captures."""
        default = op.regions[0].blocks[0]
        self.block(default)
        parts = ttg.partitions_op(op)
        if parts is None:
            return
        caps = [self.env.get(v) for v in ttg.captures(op)]
        for region in parts.regions:
            self._bind(caps, list(region.blocks[0].arguments))
            try:
                self.block(region.blocks[0])
            except Stop:
                continue


def describe(seen: Seen, names: dict) -> str:
    """`iteration 3 of the loop at f.py:120 (iv = 3, idx = 3)` for the innermost loops of a trail."""
    parts = []
    for where, trip, counters in seen.trail[-2:][::-1]:
        vals = ", ".join(f"{k} = {v}" for k, v in counters.items())
        parts.append(f"iteration {trip} of the loop at {where}" + (f" ({vals})" if vals else ""))
    return "; in ".join(parts) if parts else "outside any loop"
