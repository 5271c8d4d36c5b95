"""The structure the proof reads from each op, checked before it reads it: malformed IR is bad input, not a crash.

Generic `.mlir` is parsed with every dialect unregistered (`source.load_generic`), so the parser accepts any
op with any operands, regions, block arguments and attributes, and any text inside `!ttg.memdesc<...>`. The
dialects' verifiers (which Triton's own parser runs on a `.ttgir`) are what would reject an `scf.for` whose
body has no induction variable, an `scf.if` without its `scf.yield`, an `arith.cmpi` without a predicate
or a TMEM encoding whose `colStride` is not a number. This module checks the part of those verifiers that
the model, the encoder and the concrete runs rely on (never more: valid IR must never be refused here), one
rule per op name in `RULES`, and raises `MalformedIR` naming the op. Memory-descriptor types are checked
where they are parsed (`tlx_alias.memdesc.MalformedType`); `ModelBuilder.md` turns that into `MalformedIR` at
the op that defines or uses the value.

`tlx-verify` reports `MalformedIR` as an unreadable input (exit 2) at the op's line:col in the user's file
(`verify.source.malformed`). Any other exception raised while proving stays what it is: a tlx-verify bug.
"""
from __future__ import annotations

import re

from tlx_alias import ttg
from tlx_alias._mlir import ir, terminator

from .encode import _attr_int

INT_TYPE = re.compile(r"index|i\d+")


class MalformedIR(Exception):
    """`op` (an upstream-bindings Operation, or None) breaks a rule its dialect's verifier enforces, or (with
    `unsupported`) holds a memory descriptor of an element type the checker cannot size."""

    def __init__(self, op, problem: str, unsupported: bool = False):
        super().__init__(problem)
        self.op = op
        self.problem = problem
        self.unsupported = unsupported   # valid IR this checker cannot size (not malformed)


def _op(x):
    return getattr(x, "operation", x)


def _blocks(region) -> list:
    return list(region.blocks)




def _region_yields(op, k: int, ends_in: str, count: int, what: str) -> str | None:
    """Region k of op: one block ending in `ends_in` with `count` operands."""
    blocks = _blocks(op.regions[k])
    if len(blocks) != 1:
        return f"its {what} has {len(blocks)} blocks (one expected)"
    t = terminator(blocks[0])
    if t is None or t.name != ends_in:
        return f"its {what} does not end in {ends_in}" + (f" (it ends in {t.name})" if t is not None else "")
    if len(t.operands) != count:
        return f"the {ends_in} ending its {what} has {_count(len(t.operands), 'operand')}, {count} expected"
    return None


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def _args(block, count: int, what: str) -> str | None:
    n = len(block.arguments)
    return None if n == count else f"its {what} has {_count(n, 'block argument')}, {count} expected"


def _for(op) -> str | None:
    n = len(op.operands)
    if n < 3:
        return f"it has {n} operands (lower bound, upper bound, step, then the iter_args expected)"
    carried = n - 3
    if len(op.regions) != 1:
        return f"it has {len(op.regions)} regions (one body expected)"
    if len(op.results) != carried:
        return f"it has {len(op.results)} results for {carried} iter_args"
    problem = _region_yields(op, 0, "scf.yield", carried, "body")
    if problem:
        return problem
    body = _blocks(op.regions[0])[0]
    if len(body.arguments) == 0:
        return "its body has no induction variable (block argument 0)"
    if not INT_TYPE.fullmatch(str(body.arguments[0].type)):
        return f"its induction variable is of type {body.arguments[0].type}, not an integer"
    return _args(body, 1 + carried, "body (the induction variable, then one per iter_arg)")


def _while(op) -> str | None:
    if len(op.regions) != 2:
        return f"it has {len(op.regions)} regions (`before` and `do` expected)"
    n, r = len(op.operands), len(op.results)
    problem = (_region_yields(op, 0, "scf.condition", 1 + r, "`before` region")
               or _region_yields(op, 1, "scf.yield", n, "`do` region"))
    if problem:
        return problem
    before, after = _blocks(op.regions[0])[0], _blocks(op.regions[1])[0]
    return _args(before, n, "`before` region") or _args(after, r, "`do` region")


def _if(op) -> str | None:
    if len(op.operands) != 1:
        return f"it has {len(op.operands)} operands (one condition expected)"
    if len(op.regions) != 2:
        return f"it has {len(op.regions)} regions (`then` and `else` expected)"
    r = len(op.results)
    problem = _region_yields(op, 0, "scf.yield", r, "`then` region")
    if problem:
        return problem
    if _blocks(op.regions[1]) or r:
        return _region_yields(op, 1, "scf.yield", r, "`else` region")
    return None


def _operands(n: int, results: int = 1):
    def rule(op) -> str | None:
        if len(op.operands) != n:
            return f"it has {_count(len(op.operands), 'operand')}, {n} expected"
        if len(op.results) != results:
            return f"it has {_count(len(op.results), 'result')}, {results} expected"
        return None
    return rule


def _at_least(n: int, results: int = 1):
    def rule(op) -> str | None:
        if len(op.operands) < n:
            return f"it has {_count(len(op.operands), 'operand')}, at least {n} expected"
        if len(op.results) != results:
            return f"it has {_count(len(op.results), 'result')}, {results} expected"
        return None
    return rule


def _constant(op) -> str | None:
    if "value" not in op.attributes:
        return "it has no `value` attribute"
    return _operands(0)(op)


def _cmpi(op) -> str | None:
    p = _attr_int(op, "predicate") if "predicate" in op.attributes else None
    if p is None or not 0 <= p <= 9:
        return "its `predicate` is not one of the ten arith.cmpi predicates (0 to 9)"
    return _operands(2)(op)


def _func(op) -> str | None:
    return None if len(op.regions) == 1 else f"it has {len(op.regions)} regions (one body expected)"


def has_body(func_op) -> bool:
    """A tt.func with a body (a declaration has an empty region: no memory, nothing to check)."""
    func_op = _op(func_op)
    return len(func_op.regions) == 1 and len(_blocks(func_op.regions[0])) > 0


def _partitions(op) -> str | None:
    n = len(ttg.captures(op))
    for k, region in enumerate(op.regions):   # several blocks: a `return` in the partition (`cf.cond_br`)
        blocks = _blocks(region)
        if not blocks:
            return f"its partition region {k} has no block"
        if len(blocks[0].arguments) > n:
            return f"its partition region {k} has {len(blocks[0].arguments)} block arguments for {n} captures"
    return None


_BINARY = ("addi subi muli divsi divui remsi remui floordivsi ceildivsi ceildivui minsi maxsi minui maxui andi ori "
           "xori shli shrsi shrui").split()
_UNARY = "extsi extui trunci index_cast index_castui bitcast".split()

RULES = {
    "tt.func": _func,
    "scf.for": _for,
    "scf.while": _while,
    "scf.if": _if,
    "arith.constant": _constant,
    "arith.cmpi": _cmpi,
    "arith.select": _operands(3),
    **{f"arith.{n}": _operands(2) for n in _BINARY},
    **{f"arith.{n}": _operands(1) for n in _UNARY},
    "ttg.local_alloc": _at_least(0),
    "ttng.tmem_alloc": _at_least(0),
    "ttg.memdesc_index": _at_least(2),
    "ttg.memdesc_reinterpret": _at_least(1),
    "ttg.memdesc_subslice": _at_least(1),
    "ttng.tmem_subslice": _at_least(1),
    "ttg.memdesc_trans": _at_least(1),
    "ttg.memdesc_reshape": _at_least(1),
    "ttg.warp_specialize.partitions": _partitions,
}


def check(func_op) -> None:
    """Raise MalformedIR for the first op (pre-order) under `func_op`, itself included, that breaks its rule."""
    bad = []

    def visit(op):
        op = _op(op)
        rule = RULES.get(op.name)
        problem = rule(op) if rule is not None else None
        if problem:
            bad.append((op, problem))
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    _op(func_op).walk(visit, ir.WalkOrder.PRE_ORDER)
    if bad:
        op, problem = bad[0]
        raise MalformedIR(op, f"{op.name}: {problem}")
