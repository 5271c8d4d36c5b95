"""Z3 terms for the integer SSA values that compute buffer indices: one encoder per op, keyed by op name.

`INT_OPS` maps an `arith` op name to a function of its operands' terms; `Encoder.val(value)` builds terms
lazily (memoized) and treats the structured ops itself: `scf.for` induction variables (bounds and step as
facts), `scf.for` carried integers (inductive interval invariants found by Houdini, innermost loop first,
as facts conditional on the entry values), `scf.if` results (`If(cond, then, else)`), captures of
`ttg.warp_specialize` partitions (the captured value), kernel arguments and program ids (free inputs).

Integers are mathematical (no wrap-around: kernels are assumed not to overflow i32/i64 index arithmetic);
unsigned ops read negative values as value + 2^width. Each Z3 variable is `exact` (kernel argument, program
id, induction variable: every value its facts allow can happen) or `approx` (an op not modelled, a loop-
carried value known only through its invariants): a counterexample that needs an approximate variable is
"cannot prove", not a violation.
"""
from __future__ import annotations

import re

import z3

RLIMIT_INVARIANT = 2_000_000     # per check; a loop-invariant candidate that needs more is simply not used
RLIMIT_PROPERTY = 20_000_000     # per check; more than this is reported "cannot prove"
RLIMIT_KERNEL = 60_000_000       # all property checks of one kernel together (~15 s on a 2-core CI machine)

from tlx_alias import ttg
from tlx_alias._mlir import ir, per_type, terminator
from tlx_alias.textin import read_by_triton


# ---------------------------------------------------------------------------------------------- locations

def loc_info(loc, path: str | None = None):
    """(name or None, "file:line" or "") of a location: the innermost file line; the name of the innermost
    NameLoc, looking into an inlined callee first and then at its call site (`x = helper(...)`)."""
    name, src, todo = None, "", [loc]
    while todo:
        cur = todo.pop(0)
        if isinstance(cur, ir.NameLoc):
            name = name or cur.name_str
            todo.insert(0, cur.child_loc)
        elif isinstance(cur, ir.CallSiteLoc):
            todo[:0] = [cur.callee, cur.caller]
        elif isinstance(cur, ir.FusedLoc):
            todo[:0] = list(cur.locations)
        elif isinstance(cur, ir.FileLineColLoc) and not src:
            fname = cur.filename
            if path and (fname == "-" or read_by_triton(fname)):   # lines of the input the tool was given
                fname = path
            src = f"{fname}:{cur.start_line}"
    return name, src


def call_sites(loc, path: str | None = None) -> list:
    """The "file:line" of each call an op was inlined through, innermost first: Triton inlines a `@gluon.jit`
    helper, and the op's location becomes `callsite(<line in the helper> at <line of the call>)`."""
    def chain(cur):
        if isinstance(cur, ir.NameLoc):
            return chain(cur.child_loc)
        if isinstance(cur, ir.CallSiteLoc):
            return chain(cur.callee) + chain(cur.caller)
        if isinstance(cur, ir.FusedLoc):
            return next((c for c in map(chain, cur.locations) if c), [])
        if isinstance(cur, ir.FileLineColLoc):
            return [loc_info(cur, path)[1]]
        return []
    return chain(loc)[1:]


def _nary(make, terms, ctx=None):
    """z3.And / z3.Or (make = z3.Z3_mk_and / z3.Z3_mk_or) over Z3 booleans or Python bools, without the
    Python API's per-argument coercion (the main cost of building large disjunctions); the context is the
    first Z3 term's unless given (z3.And's default, the main context, where no term is one)."""
    if ctx is None:
        ctx = next((t.ctx for t in terms if z3.is_expr(t)), None) or z3.main_ctx()
    terms = [t if z3.is_expr(t) else z3.BoolVal(bool(t), ctx) for t in terms]
    args = (z3.Ast * len(terms))(*[t.as_ast() for t in terms])
    return z3.BoolRef(make(ctx.ref(), len(terms), args), ctx)


def _and(*terms):
    return _nary(z3.Z3_mk_and, terms)


def _or(*terms):
    return _nary(z3.Z3_mk_or, terms)


def _implies(a, b):
    """z3.Implies of two Z3 booleans through the C API."""
    return z3.BoolRef(z3.Z3_mk_implies(a.ctx_ref(), a.as_ast(), b.as_ast()), a.ctx)


# Comparisons and sums of integer terms (or a term and a Python int) through the C API. z3's operators
# coerce each operand (an int becomes a decimal string, a sort object and a numeral) and check sorts: five
# to ten C calls and wrapper objects per operator, where these make one; with the numerals made once per
# proof context (`num`) that was 4-7% of a GEMM's proof. Two Python ints give the Python result.

def num(value: int, ctx: z3.Context):
    """The numeral `value`, made once per context (the cache dies with it: `verify._release`)."""
    cache = ctx.__dict__.setdefault("_tlx_numerals", {})
    term = cache.get(value)
    if term is None:
        term = cache[value] = z3.IntVal(value, ctx)
    return term


def _two(a, b):
    """(context, a's ast, b's ast), or None when neither is a Z3 term."""
    ctx = a.ctx if isinstance(a, z3.ExprRef) else b.ctx if isinstance(b, z3.ExprRef) else None
    if ctx is None:
        return None
    return (ctx, a.as_ast() if isinstance(a, z3.ExprRef) else num(a, ctx).as_ast(),
            b.as_ast() if isinstance(b, z3.ExprRef) else num(b, ctx).as_ast())


def _comparison(make, python):
    def compare(a, b):
        t = _two(a, b)
        return python(a, b) if t is None else z3.BoolRef(make(t[0].ref(), t[1], t[2]), t[0])
    return compare


def _arithmetic(make, python):
    def combine(a, b):
        t = _two(a, b)
        return python(a, b) if t is None else z3.ArithRef(make(t[0].ref(), 2, (z3.Ast * 2)(t[1], t[2])), t[0])
    return combine


lt = _comparison(z3.Z3_mk_lt, lambda a, b: a < b)
le = _comparison(z3.Z3_mk_le, lambda a, b: a <= b)
gt = _comparison(z3.Z3_mk_gt, lambda a, b: a > b)
ge = _comparison(z3.Z3_mk_ge, lambda a, b: a >= b)
add = _arithmetic(z3.Z3_mk_add, lambda a, b: a + b)
sub = _arithmetic(z3.Z3_mk_sub, lambda a, b: a - b)
mul = _arithmetic(z3.Z3_mk_mul, lambda a, b: a * b)


def substitute(term, x, value):
    """z3.substitute(term, (x, value)) for one variable, without the wrapper's per-pair sort checks."""
    ast = z3.Z3_substitute(term.ctx_ref(), term.as_ast(), 1, (z3.Ast * 1)(x.as_ast()), (z3.Ast * 1)(value.as_ast()))
    return type(term)(ast, term.ctx)   # the same sort


def int_var(name: str, ctx: z3.Context):
    """z3.Int(name, ctx) with the integer sort made once per context."""
    sort = ctx.__dict__.get("_tlx_int_sort")
    if sort is None:
        sort = ctx.__dict__["_tlx_int_sort"] = z3.IntSort(ctx)
    return z3.ArithRef(z3.Z3_mk_const(ctx.ref(), z3.to_symbol(name, ctx), sort.ast), ctx)


def _attr_str(op, name):
    attrs = op.attributes
    if name not in attrs:
        return None
    a = attrs[name]
    return ir.StringAttr(a).value if isinstance(a, ir.StringAttr) else str(a)


def _attr_int(op, name):
    attrs = op.attributes
    if name not in attrs:
        return None
    try:
        return ir.IntegerAttr(attrs[name]).value
    except ValueError:   # not an IntegerAttr (an attribute the bindings cannot cast)
        m = re.match(r"-?\d+", str(attrs[name]))
        return int(m.group(0)) if m else None


def _attr_ints(op, name):
    attrs = op.attributes
    if name not in attrs:
        return None
    return [int(x) for x in re.findall(r"-?\d+", str(attrs[name]).split(":", 1)[-1])]


# ---------------------------------------------------------------------------------------------- encoder

def free_vars(term):
    """The uninterpreted constants (variables) of a Z3 term."""
    out, todo, seen = [], [term], set()
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(t)
        todo += list(t.children())
    return out


def _has_cycle(succs: dict) -> bool:
    """Does the graph {block: [successor blocks]} have a cycle (a loop made of branches)?"""
    state = {}                       # 1: on the current path, 2: done
    for start in succs:
        if state.get(start):
            continue
        stack, state[start] = [(start, iter(succs.get(start, ())))], 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return True
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(succs.get(nxt, ()))))
    return False


def _terminator(region):
    """The last op of a region's first block (scf.yield / scf.condition)."""
    return terminator(region.blocks[0])


# Integer operands that feed no property: the phase operand of an mbarrier wait (operand 1). The phases of the
# rings are carried values whose Houdini search cost about a quarter of blackwell_gemm's proof and found nothing
# any property reads.
_NOT_READ = {"ttng.wait_barrier": (1,)}


def read_by_a_property(arg, limit=4096) -> bool:
    """Whether a loop-carried value (the loop body's block argument) may reach a property's terms: following
    its uses through the modelled integer arithmetic and where scf and warp_specialize hand it on
    (`ttg.passes_to`), it reaches an operand of any other op but the ones in `_NOT_READ`, a loop bound, or an
    if / while condition. Conservative: any use not followed is a read. A value read by nothing checked gets no loop invariant (`Encoder._loop`)."""
    seen, todo = set(), [arg]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if len(seen) > limit:
            return True
        for use in v.uses:
            user = getattr(use.owner, "operation", use.owner)
            name, k = user.name, use.operand_number
            if k in _NOT_READ.get(name, ()):
                continue
            if name in INT_OPS or name == "arith.constant":
                todo += list(user.results)
                continue
            dests = ttg.passes_to(user, k)
            if dests is None:
                return True
            todo += dests
    return False


def _int_kind(type_text: str):
    """"i1" (a Z3 boolean), "int" (any other integer or index: a Z3 Int) or None (not encoded)."""
    if type_text == "i1":
        return "i1"
    return "int" if type_text == "index" or re.fullmatch(r"i\d+", type_text) else None


def _u(x, width):
    """Unsigned reading of a signed value of `width` bits."""
    return z3.If(x >= 0, x, x + (1 << width))


def _width(value) -> int:
    t = str(value.type)
    if t == "index":
        return 64
    m = re.fullmatch(r"i(\d+)", t)
    return int(m.group(1)) if m else 64


def _const_int(e):
    if not z3.is_int_value(e):
        if z3.is_const(e) or not z3.is_arith(e):  # a variable: not a constant (skip simplify: it is slow)
            return None
        e = z3.simplify(e)
    return e.as_long() if z3.is_int_value(e) else None


def _template(kind, c, a, make):
    """make(X) built once per (kind, constant, context) and instantiated by substitution: a few Z3 Python
    calls fewer per op, which is most of the cost of encoding a kernel. The cache lives on the context, so
    it dies with the proof's context (a module-level cache kept every context alive: 3.4 GB after 200 proofs)."""
    cache = a.ctx.__dict__.setdefault("_tlx_templates", {})
    if (kind, c) not in cache:
        x = int_var("template.x", a.ctx)
        cache[kind, c] = (x, make(x))
    x, t = cache[kind, c]
    return substitute(t, x, a)


def _divs(a, b):
    """arith.divsi: truncating division (b a constant)."""
    c = _const_int(b)
    if c is None or c == 0:
        return None
    return _template("divsi", c, a, lambda x: (1 if c > 0 else -1) * z3.If(x >= 0, x / abs(c), -((-x) / abs(c))))


def _floordiv(a, b):
    c = _const_int(b)
    if c is None or c == 0:
        return None
    return a / c if c > 0 else (-a) / (-c)


def _ceildiv(a, b):
    c = _const_int(b)
    if c is None or c <= 0:
        return None
    return -((-a) / c)


def _rems(a, b):
    c = _const_int(b)
    if c is None or c == 0:
        return None
    return _template("remsi", c, a, lambda x: x - c * _divs(x, z3.IntVal(c, x.ctx)))


def _div_u(a, b, w):
    c = _const_int(b)
    if c is None or c <= 0:
        return None
    return _u(a, w) / c


def _rem_u(a, b, w):
    c = _const_int(b)
    if c is None or c <= 0:
        return None
    return _u(a, w) % c


def _bit(x, k):
    """Bit k of x in two's complement (floor division: right for negative x too)."""
    return (x / (1 << k)) % 2


def _bitwise(kind, a, b):
    """x & c, x | c, x ^ c for a constant c (its bits one by one: `index ^= 1`, `phase | 1`, `x & 6`);
    None when neither operand is a constant or c has more than 16 bits."""
    for x, y in ((a, b), (b, a)):
        c = _const_int(y)
        if c is None or not 0 <= c < (1 << 16):
            continue
        if kind == "and" and (c & (c + 1)) == 0:
            return x % (c + 1)   # two's complement: x & (2^k - 1) == x mod 2^k
        out = x if kind != "and" else z3.IntVal(0, x.ctx)
        for k in range(c.bit_length()):
            if not (c >> k) & 1:
                continue
            bit = _bit(x, k)
            if kind == "and":
                out = out + bit * (1 << k)
            elif kind == "or":
                out = out + (1 - bit) * (1 << k)
            else:
                out = out + (1 - 2 * bit) * (1 << k)
        return out
    return None


def _shl(a, b):
    c = _const_int(b)
    return None if c is None or c < 0 or c > 62 else a * (1 << c)


def _shrs(a, b):
    c = _const_int(b)
    return None if c is None or c < 0 or c > 62 else a / (1 << c)


def _shru(a, b, w):
    c = _const_int(b)
    return None if c is None or c < 0 or c > 62 else _u(a, w) / (1 << c)


_CMP = {0: lambda a, b, w: a == b, 1: lambda a, b, w: a != b, 2: lambda a, b, w: lt(a, b),
        3: lambda a, b, w: le(a, b), 4: lambda a, b, w: gt(a, b), 5: lambda a, b, w: ge(a, b),
        6: lambda a, b, w: _u(a, w) < _u(b, w), 7: lambda a, b, w: _u(a, w) <= _u(b, w),
        8: lambda a, b, w: _u(a, w) > _u(b, w), 9: lambda a, b, w: _u(a, w) >= _u(b, w)}
_CMP_TEXT = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<u", 7: "<=u", 8: ">u", 9: ">=u"}


# One encoder per integer op: f(enc, op, operand terms, width) -> Z3 term, or None ("not modelled").
INT_OPS = {
    "arith.addi": lambda e, op, a, w: add(a[0], a[1]),
    "arith.subi": lambda e, op, a, w: sub(a[0], a[1]),
    "arith.muli": lambda e, op, a, w: mul(a[0], a[1]),
    "arith.divsi": lambda e, op, a, w: _divs(a[0], a[1]),
    "arith.divui": lambda e, op, a, w: _div_u(a[0], a[1], w),
    "arith.remsi": lambda e, op, a, w: _rems(a[0], a[1]),
    "arith.remui": lambda e, op, a, w: _rem_u(a[0], a[1], w),
    "arith.floordivsi": lambda e, op, a, w: _floordiv(a[0], a[1]),
    "arith.ceildivsi": lambda e, op, a, w: _ceildiv(a[0], a[1]),
    "arith.ceildivui": lambda e, op, a, w: _ceildiv(_u(a[0], w), a[1]),
    "arith.minsi": lambda e, op, a, w: z3.If(a[0] <= a[1], a[0], a[1]),
    "arith.maxsi": lambda e, op, a, w: z3.If(a[0] >= a[1], a[0], a[1]),
    "arith.minui": lambda e, op, a, w: z3.If(_u(a[0], w) <= _u(a[1], w), a[0], a[1]),
    "arith.maxui": lambda e, op, a, w: z3.If(_u(a[0], w) >= _u(a[1], w), a[0], a[1]),
    "arith.andi": lambda e, op, a, w: _and(a[0], a[1]) if z3.is_bool(a[0]) else _bitwise("and", a[0], a[1]),
    "arith.ori": lambda e, op, a, w: _or(a[0], a[1]) if z3.is_bool(a[0]) else _bitwise("or", a[0], a[1]),
    "arith.xori": lambda e, op, a, w: z3.Xor(a[0], a[1]) if z3.is_bool(a[0]) else _bitwise("xor", a[0], a[1]),
    "arith.shli": lambda e, op, a, w: _shl(a[0], a[1]),
    "arith.shrsi": lambda e, op, a, w: _shrs(a[0], a[1]),
    "arith.shrui": lambda e, op, a, w: _shru(a[0], a[1], w),
    "arith.select": lambda e, op, a, w: z3.If(a[0], a[1], a[2]),
    "arith.cmpi": lambda e, op, a, w: _CMP[_attr_int(op, "predicate")](a[0], a[1], e.width_of(op.operands[0])),
    "arith.extsi": lambda e, op, a, w: a[0],
    "arith.trunci": lambda e, op, a, w: a[0],
    "arith.index_cast": lambda e, op, a, w: a[0],
    "arith.index_castui": lambda e, op, a, w: _u(a[0], e.width_of(op.operands[0])),
    "arith.extui": lambda e, op, a, w: (z3.If(a[0], 1, 0) if z3.is_bool(a[0])
                                        else _u(a[0], e.width_of(op.operands[0]))),
    "arith.bitcast": lambda e, op, a, w: a[0],
}
# Text of each modelled op, for counterexamples in the kernel's own terms.
_TEXT = {"arith.addi": "{0} + {1}", "arith.subi": "{0} - {1}", "arith.muli": "{0} * {1}",
         "arith.divsi": "{0} / {1}", "arith.divui": "{0} /u {1}", "arith.remsi": "{0} % {1}",
         "arith.remui": "{0} %u {1}", "arith.floordivsi": "{0} // {1}", "arith.ceildivsi": "ceildiv({0}, {1})",
         "arith.minsi": "min({0}, {1})", "arith.maxsi": "max({0}, {1})", "arith.andi": "{0} & {1}",
         "arith.ori": "{0} | {1}", "arith.xori": "{0} ^ {1}", "arith.shli": "{0} << {1}",
         "arith.shrsi": "{0} >> {1}", "arith.shrui": "{0} >>u {1}", "arith.select": "{0} ? {1} : {2}"}
# ops whose constant operands can bound their result (or, for cmpi, a value selected by it)
_BOUNDING = {"arith.remsi", "arith.remui", "arith.andi", "arith.ori", "arith.xori", "arith.cmpi", "arith.select",
             "arith.minsi", "arith.minui", "arith.maxsi", "arith.maxui", "scf.if"}
_TRANSPARENT = {"arith.extsi", "arith.trunci", "arith.index_cast", "arith.index_castui", "arith.extui",
                "arith.bitcast"}


class _Candidate:
    """One interval invariant of one carried integer, `t >= 0` (upper None) or `t < upper`, its terms built
    once (`ge` / `lt`: building a term through the Python operators costs more than checking it): on the
    carried value, its entry value, its next value and the loop's result."""
    __slots__ = ("x", "upper", "holds", "at_entry", "after_step", "of_result")

    def __init__(self, x, result, init, after, upper):
        self.x, self.upper = x, upper

        def term(t):
            return ge(t, 0) if upper is None else lt(t, upper)
        self.holds, self.at_entry, self.after_step = term(x), term(init), term(after)
        self.of_result = term(result) if result is not None else None


def _grows(x, next_t) -> bool:
    """Is the next value `x + c` for a constant c > 0 (a counter with no wrap: no upper bound is inductive)?"""
    step = z3.simplify(sub(next_t, x))
    return z3.is_int_value(step) and step.as_long() > 0


def _negate(term):
    """z3.Not without the Python wrapper's type checks (one per candidate and Houdini round)."""
    return z3.BoolRef(z3.Z3_mk_not(term.ctx_ref(), term.as_ast()), term.ctx)


def _post_order(loops) -> list:
    """Ops listed in pre-order, listed again in post-order: each after the ops of the list nested in it."""
    out, open_ = [], []
    for op in loops:
        ancestors, cur = [], op.parent
        while cur is not None:
            cur = getattr(cur, "operation", cur)
            ancestors.append(cur)
            cur = cur.parent
        while open_ and not any(open_[-1] == a for a in ancestors):
            out.append(open_.pop())
        open_.append(op)
    return out + open_[::-1]


class Encoder:
    """Z3 terms for integer SSA values, built lazily and memoized; `facts` holds what is known about them."""

    def __init__(self, ctx: z3.Context, path: str | None):
        self.ctx, self.path = ctx, path
        self.memo: dict = {}
        self.facts: list = []
        self.kind: dict = {}             # z3 var name -> "exact" | "approx"
        self.why: dict = {}              # z3 var name -> human description
        self.loops_done: set = set()
        self.loop_vars: dict = {}
        self.ranges: dict = {}           # scf.for op -> the literal `runs` of its body (`_range`)
        self._carried_arg: dict = {}         # Z3 id of a carried value's variable -> its block argument
        self._hs = [None, None]          # solver(k): [solver, facts added so far, its rlimit], made when asked for
        self._names: dict = {}
        self._vars: dict = {}            # Z3 ast id -> names of its variables (see var_names)
        self._vars_roots: list = []      # terms whose subterm ids _vars holds: alive, so ids stay theirs
        self._cfg = None                 # the function body's blocks, predecessors, cycle (`_block_condition`)
        self._paths: dict = {}           # block -> the path condition of its ops (`path_condition`)
        self._kinds: dict = {}           # MLIR type -> "i1", "int" or None (`val`: a type printed once)
        self._by_name: dict = {}         # variable name -> the facts it occurs in (`_facts_naming`)
        self._indexed = 0                # facts indexed in _by_name so far

    # -- variables
    def fresh(self, base: str, exact: bool, why: str, is_bool=False):
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        name = base if n == 0 else f"{base}#{n}"
        var = z3.Bool(name, self.ctx) if is_bool else int_var(name, self.ctx)
        self.kind[name] = "exact" if exact else "approx"
        self.why[name] = why
        return var

    def program_vars(self) -> dict:
        """{axis: (program-id variables, grid-size variables)} of the encoding: each `tt.get_program_id` /
        `tt.get_num_programs` op is a variable of its own (`pidx`, `pidx#1`, `num_programsy`, ...)."""
        out = {axis: ([], []) for axis in "xyz"}
        for name in self.kind:
            m = re.fullmatch(r"(pid|num_programs)([xyz])(#\d+)?", name)
            if m:
                out[m.group(2)][m.group(1) != "pid"].append(int_var(name, self.ctx))
        return out

    def var_names(self, term) -> frozenset:
        """Names of the variables of a Z3 term, memoized per subterm on Z3's C API: the loop analysis asks
        this of every fact once per inner-loop result, and facts share most of their subterms (walking
        them through z3's Python wrappers cost seconds on upstream's attention example)."""
        ctx, memo = self.ctx.ref(), self._vars
        root = term.as_ast()
        rid = z3.Z3_get_ast_id(ctx, root)
        if rid in memo:
            return memo[rid]
        self._vars_roots.append(term)
        stack = [(root, rid, None)]      # (ast, its id, [(argument, its id)] once expanded)
        while stack:
            a, i, kids = stack[-1]
            if i in memo:
                stack.pop()
                continue
            if kids is None:
                kind = z3.Z3_get_ast_kind(ctx, a)
                n = z3.Z3_get_app_num_args(ctx, a) if kind == z3.Z3_APP_AST else 0
                if kind == z3.Z3_QUANTIFIER_AST:
                    args = [z3.Z3_get_quantifier_body(ctx, a)]
                elif n:
                    args = [z3.Z3_get_app_arg(ctx, a, k) for k in range(n)]
                else:
                    if kind == z3.Z3_APP_AST:   # a constant: a variable's name, or true/false
                        d = z3.Z3_get_app_decl(ctx, a)
                        leaf = z3.Z3_get_decl_kind(ctx, d) == z3.Z3_OP_UNINTERPRETED
                        memo[i] = frozenset([z3.Z3_get_symbol_string(ctx, z3.Z3_get_decl_name(ctx, d))] if leaf
                                            else ())
                    else:                       # numerals, bound variables
                        memo[i] = frozenset()
                    stack.pop()
                    continue
                kids = [(b, z3.Z3_get_ast_id(ctx, b)) for b in args]
                stack[-1] = (a, i, kids)
                stack += [(b, j, None) for b, j in kids if j not in memo]
                continue
            memo[i] = frozenset().union(*(memo[j] for _, j in kids))
            stack.pop()
        return memo[rid]

    def width_of(self, v) -> int:
        return _width(v)

    @staticmethod
    def is_int_type(v) -> bool:   # (i1 included)
        return _int_kind(str(v.type)) is not None

    def val(self, v):
        """The Z3 term of an integer or i1 value (None for any other type), encoded at its first request."""
        try:
            return self.memo[v]
        except KeyError:
            pass
        kind = per_type(self._kinds, v.type, _int_kind)
        out = None if kind is None else self._encode(v, is_bool=kind == "i1")
        self.memo[v] = out
        return out

    def _opaque(self, v, what, is_bool):
        name, src = loc_info(v.owner.location if isinstance(v, ir.OpResult) else v.location, self.path)
        base = name or what.split(" ")[0].split(".")[-1]
        return self.fresh(base, False, f"{what}" + (f" at {src}" if src else ""), is_bool)

    def _encode(self, v, is_bool):
        if isinstance(v, ir.BlockArgument):
            return self._block_arg(v, is_bool)
        op = v.owner
        op = getattr(op, "operation", op)
        name = op.name
        if name == "arith.constant":
            text = str(op.attributes["value"]).split(":")[0].strip()
            if is_bool:
                return z3.BoolVal(text in ("true", "1", "-1"), self.ctx)
            try:
                return num(int(text), self.ctx)
            except ValueError:
                return self._opaque(v, "non-integer constant", is_bool)
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            axis = _attr_int(op, "axis") or 0
            var = self.fresh(("pid" if name == "tt.get_program_id" else "num_programs") + "xyz"[axis % 3],
                             True, name)
            self.facts.append(ge(var, 0 if name == "tt.get_program_id" else 1))
            self.facts.append(lt(var, 2 ** 31))
            return var
        if name in ("scf.for", "scf.while"):
            return self._loop_result(op, v.result_number, is_bool)
        if name == "scf.if":
            return self._if_result(op, v.result_number, is_bool)
        if name in INT_OPS:
            args = [self.val(a) for a in op.operands]
            if all(a is not None for a in args):
                try:
                    out = INT_OPS[name](self, op, args, _width(v))
                except (z3.Z3Exception, KeyError, TypeError):
                    out = None
                if out is not None:
                    return out
            return self._opaque(v, f"{name} (not modelled for these operands)", is_bool)
        return self._opaque(v, f"result of {name}", is_bool)

    def _block_arg(self, v, is_bool):
        block = v.owner
        parent = block.region.owner
        parent = getattr(parent, "operation", parent)
        k = v.arg_number
        if parent.name == "scf.for":
            if k == 0:
                return self._iv(parent, is_bool)
            self._loop_vars(parent)
            return self.memo[v]
        if parent.name == "scf.while":
            self._loop_vars(parent)
            if v in self.memo:
                return self.memo[v]
            # an argument of the `do` region: the value scf.condition forwards
            return self.val(_terminator(parent.regions[0]).operands[1 + k])
        if parent.name == ttg.WS_PARTITIONS:
            return self.val(ttg.capture_of(v))
        if parent.name == "tt.func":
            name, _ = loc_info(v.location, self.path)
            if block != parent.regions[0].blocks[0]:   # what a branch passes on (a runtime `return`'s graph)
                return self._opaque(v, "value a branch passes to a block", is_bool)
            if _attr_str(parent, "sym_visibility") == "private":   # a noinline helper: its callers not followed
                helper = _attr_str(parent, "sym_name") or "?"
                var = self.fresh(name or f"arg{k}", False, f"argument of the noinline helper {helper} (its "
                                 "callers' values are not followed)", is_bool)
            else:
                var = self.fresh(name or f"arg{k}", True, "kernel argument", is_bool)
            if not is_bool:
                w = _width(v)
                self.facts += [ge(var, -(1 << (w - 1))), lt(var, 1 << (w - 1))]
            return var
        return self._opaque(v, f"block argument of {parent.name}", is_bool)

    # -- scf.for: induction variable (exact) and carried values (Houdini invariants, approximate)
    def _iv(self, loop, is_bool):
        lb, ub, step = (self.val(loop.operands[i]) for i in range(3))
        iv = loop.regions[0].blocks[0].arguments[0]
        name, src = loc_info(loop.location, self.path)
        var = self.fresh(f"iv@{src.rsplit(':', 1)[-1]}" if src else "iv", True,
                         f"induction variable of the loop at {src or '?'}")
        self.memo[iv] = var
        terms = []
        if lb is not None:
            terms.append(ge(var, lb))
        if ub is not None:
            terms.append(lt(var, ub))
        s = _const_int(step) if step is not None else None
        if lb is not None and s is not None and s > 1:
            terms.append((var - lb) % s == 0)
        # a fact guarded by a literal of its own, which the body's path condition holds: the solvers take the
        # range in once (as premises of every check it cost up to a fifth of the loop invariants' time)
        runs = z3.Bool(f"{var.decl().name()}.runs", self.ctx)   # (no kernel name has a '.' or an '@')
        if terms:
            self.facts.append(_implies(runs, _and(*terms)))
        self.ranges[loop] = runs
        return var

    def _range(self, loop):
        """The literal `runs` of scf.for `loop`, with the fact `runs => lb <= iv < ub` (and the step's residue):
        the range holds where the body runs, so `runs` is a condition of the ops in the body (`path_condition`)
        and of the loop's step, and the range is never a fact by itself: that would say every loop runs at
        least once (`for k in range(n)` then proved `(n - 1) % 4` in range)."""
        if loop not in self.ranges:
            self.val(loop.regions[0].blocks[0].arguments[0])
        return self.ranges[loop]

    def prepare(self, ops):
        """Invariants of every loop, innermost first: an outer loop's step needs its inner loops' facts; only
        for the carried values some property may read (`read_by_a_property`). `ops`: the function's ops in
        pre-order, from the model's walk (a walk calls back into Python at every op: one for both)."""
        for loop in _post_order([op for op in ops if op.name in ("scf.for", "scf.while")]):
            self._loop(loop)
        assumes = [op for op in ops if op.name == "llvm.intr.assume"]
        for op in assumes:   # `gl.assume(c)`: the kernel promises c wherever the op runs
            c = self.val(op.operands[0])
            if c is not None:
                self.facts.append(_implies(self.path_condition(op), c))

    def _loop_vars(self, loop):
        """(var, result var, init, yielded value, is_bool) per carried integer; variables made once.
        scf.for: iter_arg k. scf.while: argument k of the `before` region (init operand k, yielded by the
        `do` region); its result k is what scf.condition forwards (tracked when that is the argument itself)."""
        if loop in self.loop_vars:
            return self.loop_vars[loop]
        is_while = loop.name == "scf.while"
        body = loop.regions[0].blocks[0]
        if is_while:
            args, inits = list(body.arguments), list(loop.operands)
            yields = _terminator(loop.regions[1]).operands
            forwarded = list(_terminator(loop.regions[0]).operands)[1:]
        else:
            args, inits = list(body.arguments)[1:], list(loop.operands)[3:]
            yields = terminator(body).operands
        _, src = loc_info(loop.location, self.path)
        line = src.rsplit(":", 1)[-1] if src else "?"
        carried = []
        for k, (arg, init) in enumerate(zip(args, inits)):
            if not self.is_int_type(arg):
                continue
            is_bool = str(arg.type) == "i1"
            x = self.fresh(f"carried{k}@{line}", False, f"value carried by the loop at {src or '?'} "
                           f"(iter_arg {k})", is_bool)
            self.memo[arg] = x
            self._carried_arg[x.get_id()] = arg
            res = None
            if not is_while:
                res = loop.results[k]
            elif k < len(forwarded) and forwarded[k] == arg:
                res = loop.results[k]
            r = None
            if res is not None:
                r = self.fresh(f"result{k}@{line}", False, f"result {k} of the loop at {src or '?'}", is_bool)
                self.memo[res] = r
            carried.append((x, r, init, yields[k], is_bool))
        self.loop_vars[loop] = carried
        return carried

    def _loop(self, loop):
        """Inductive invariants (Houdini over interval candidates) of the loop's carried integers, as facts."""
        if loop in self.loops_done:
            return
        self.loops_done.add(loop)
        body = loop.regions[0].blocks[0]
        carried = self._loop_vars(loop)
        ints = [c for c in carried if not c[4] and read_by_a_property(self._carried_arg[c[0].get_id()])]
        if not ints:
            return
        guard = []
        if loop.name == "scf.while":   # the `do` region runs only when the condition holds
            cond = self.val(_terminator(loop.regions[0]).operands[0])
            guard = [cond] if cond is not None else []
        # where a step runs (the induction variable's range, the while's condition, the enclosing loops' and
        # branches') and where the loop is entered: the premises of the inductive step and of the entry check
        step = [self.path_condition(_terminator(loop.regions[-1]))]
        entry = [self.path_condition(loop)]
        inits = [self.val(c[2]) for c in ints]
        nexts = [self.val(c[3]) for c in ints]
        cands = []
        for (x, r, init, y, _), init_t, next_t in zip(ints, inits, nexts):
            if init_t is None or next_t is None:
                continue
            # upper bounds from the constants of the value's own update (a ring counter's STAGES, a phase's 2 from
            # `phase ^ 1` or `1 - phase`); 1 and 2 only for an update without any: each bound that is not
            # inductive costs a solver call to drop (blackwell_gemm: 41 -> 23 calls with the same invariants)
            bounds = self._constants_under(y, body) or {1, 2}
            if not guard and (_grows(x, next_t) or self._grows_in_inner_loop(self._carried_arg[x.get_id()], y)):
                bounds = ()   # `x + c` each iteration: x = b - 1 refutes any `x < b`
            cands.append(_Candidate(x, r, init_t, next_t, None))
            for b in sorted(bounds):
                cands.append(_Candidate(x, r, init_t, next_t, b))
        # Per group of counters whose updates read only each other (a ring index and its phase; `_groups`: each
        # closed under "its update reads"), with a premise on that group alone: an enclosing loop can then use
        # one counter's bounds without proving every other carried value's at entry. A group's candidates are
        # inductive or not whatever the others do, so Houdini per group finds the whole set's result restricted
        # to it, and the groups' facts together imply the whole set's: no search over all candidates at once.
        groups = self._groups(ints, guard) if cands and len(ints) > 1 else []   # one counter: one group
        for group in groups if len(groups) > 1 else [None]:
            self._infer([c for c in cands if group is None or c.x in group], step, entry)

    def _grows_in_inner_loop(self, arg, y) -> bool:
        """Is `y`, the next value of the carried `arg`, what an inner scf.for returns for `arg` given as its
        entry value, with that loop only adding positive constants to it (`_grows`, or again through a loop
        nested in it)? That loop gets no upper-bound candidate, so its result has no upper-bound fact, and no
        upper bound of `arg` can be inductive: hopper_gemm's ring counter `it`, carried through the k-loop."""
        op = y.owner if isinstance(y, ir.OpResult) else None
        op = getattr(op, "operation", op)
        if op is None or op.name != "scf.for" or op.operands[3 + y.result_number] != arg:
            return False
        k = y.result_number
        inner_arg, inner_y = op.regions[0].blocks[0].arguments[1 + k], _terminator(op.regions[0]).operands[k]
        x, next_t = self.val(inner_arg), self.val(inner_y)
        if x is None or next_t is None:
            return False
        return _grows(x, next_t) or self._grows_in_inner_loop(inner_arg, inner_y)

    def _infer(self, cands, step, entry):
        """Houdini: the largest set of candidates one iteration preserves (assuming all of them), first over all
        candidates (what holds whenever the entry values satisfy them: the premise an enclosing loop's
        invariant supplies), then over those of it that hold at entry (what holds from the start). The
        largest inductive subset of a set is unique and grows with the set, so the second search may start
        from the first one's result instead of from every candidate true at entry."""
        everywhere = self._houdini(cands, step)
        at_entry = self._prune(everywhere, entry, lambda c: c.at_entry)
        from_start = self._houdini(at_entry, step) if len(at_entry) < len(everywhere) else everywhere
        if from_start is not everywhere:
            self._assume(from_start)
        self._assume_levels(everywhere, step)

    def _assume_levels(self, live, step):
        """Facts for `live` and for weaker premises: a tight bound that is inductive but need not hold at entry
        (`idx < 1` for an index that two steps per iteration bring back to where it was) would make the
        premise false at the entries where it fails, and the fact say nothing there. So, level by level, the
        tightest upper bound of each counter that has several is dropped and the rest searched again."""
        while live:
            self._assume(live)
            tightest = {}
            for c in live:
                if c.upper is not None:
                    tightest.setdefault(c.x.get_id(), []).append(c)
            drop = {id(min(cs, key=lambda c: c.upper)) for cs in tightest.values() if len(cs) > 1}
            if not drop:
                return
            live = self._houdini([c for c in live if id(c) not in drop], step)

    def _assume(self, live):
        """Facts: the entry values satisfy the invariants `live` => the carried values and results do."""
        if not live:
            return
        premise = _and(*[c.at_entry for c in live])
        self.facts.append(_implies(premise, _and(*[c.holds for c in live])))
        outs = [c.of_result for c in live if c.of_result is not None]
        if outs:
            self.facts.append(_implies(premise, _and(*outs)))

    def _groups(self, ints, guard) -> list:
        """Sets of carried variables closed under "its update reads": a carried value's next value reads the
        variables in its yielded term and, through the result of an inner loop, everything that loop's
        facts mention (its premise is over its entry values)."""
        xs = {c[0].decl().name(): c[0] for c in ints}
        reads = {}
        for x, _, _, y, _ in ints:
            todo, seen = [self.val(y)] + list(guard), set()
            found = set()
            while todo:
                for name in self.var_names(todo.pop()):
                    if name in seen:
                        continue
                    seen.add(name)
                    if name in xs:
                        found.add(name)
                    elif self.kind.get(name) == "approx":   # an inner loop's result: what its facts read
                        todo += self._facts_naming(name)
            reads[x.decl().name()] = found
        groups = []
        for name in xs:
            closed, todo = {name}, [name]
            while todo:
                for n in reads.get(todo.pop(), ()):
                    if n not in closed:
                        closed.add(n)
                        todo.append(n)
            group = {xs[n] for n in closed}
            if group not in groups:
                groups.append(group)
        return groups

    def _facts_naming(self, name) -> list:
        """The facts in which the variable `name` occurs, in order: an index by name, extended with the facts
        added since the last call (`_groups` asks for each inner loop's result of each carried value: scanning
        every fact each time was a twentieth of blackwell_gemm's proof)."""
        index = self._by_name
        for f in self.facts[self._indexed:]:
            for n in self.var_names(f):
                index.setdefault(n, []).append(f)
        self._indexed = len(self.facts)
        return index.get(name, [])

    def _houdini(self, live, step=()):
        """The largest subset of `live` that one iteration preserves when all of it holds (and `step`, where
        an iteration runs):
        each solver call either proves the whole set preserved or drops what its counterexample falsifies,
        and the next call assumes only what is left (the same largest subset, one call per round fewer than
        first pruning everything the old assumptions refute)."""
        while live:
            kept = self._prune(live, [c.holds for c in live] + list(step), lambda c: c.after_step, rounds=1)
            if len(kept) == len(live):
                return live
            live = kept
        return live

    def _constants_under(self, v, body, depth=0, bounding="le"):
        """Upper bounds b (candidates `t < b`) from the integer constants in the expression tree of v (inside the
        loop body) that can bound it: a modulus c gives c; a mask, a compared or selected value, the c of `c - x`
        give c and c + 1 (`t <= c`). Not an addend or a divisor (a step of 1, the 63 of a ceiling division),
        which would only lengthen Houdini's search."""
        out = set()
        if depth > 12 or bounding is None:   # under an addend or a divisor nothing bounds v (a mask in an addend)
            return out
        if isinstance(v, ir.BlockArgument):
            parent = getattr(v.owner.region.owner, "operation", v.owner.region.owner)
            if parent.name == "scf.while" and v.owner.region == parent.regions[1]:   # what scf.condition forwards
                return self._constants_under(_terminator(parent.regions[0]).operands[1 + v.arg_number], body,
                                             depth + 1, bounding)
            return out
        op = getattr(v.owner, "operation", v.owner)
        if op.name in ("scf.for", "scf.while"):   # a counter carried through an inner loop: its update there
            k = v.result_number
            inner = (_terminator(op.regions[0]).operands[k] if op.name == "scf.for"
                     else _terminator(op.regions[0]).operands[1 + k])
            return self._constants_under(inner, body, depth + 1, bounding)
        if op.name == "arith.constant":
            c = _const_int(self.val(v)) if self.is_int_type(v) and bounding else None
            if c is not None and 0 < c < (1 << 24):
                out |= {c} if bounding == "lt" else {c, c + 1}
            return out
        if op.name in INT_OPS or op.name in ("scf.if",):
            inner = (bounding if op.name in _TRANSPARENT else "lt" if op.name in ("arith.remsi", "arith.remui")
                     else "le" if op.name in _BOUNDING else None)
            for k, a in enumerate(op.operands):   # `c - x` (a phase's `1 - phase`): c bounds it
                out |= self._constants_under(a, body, depth + 1,
                                             "le" if op.name == "arith.subi" and k == 0 else inner)
            if op.name == "scf.if":
                for region in op.regions:
                    for blk in region.blocks:
                        for y in terminator(blk).operands:
                            out |= self._constants_under(y, body, depth + 1)
        return out

    def solver(self, k):
        """The kernel's solver k, holding every fact (creating one costs more than a check): 0 is Z3's
        linear-integer solver (the index arithmetic is linear with constant divisors and moduli: about 3x
        faster than the default solver on the kernels here), 1 the default solver, made only when the first
        gives up (a modulus by a variable, a product of variables)."""
        if self._hs[k] is None:
            solver = z3.SolverFor("QF_LIA", ctx=self.ctx) if k == 0 else z3.Solver(ctx=self.ctx)
            self._hs[k] = [solver, 0, None]
            self.limit(k, RLIMIT_INVARIANT)
        entry = self._hs[k]
        if entry[1] < len(self.facts):
            entry[0].add(self.facts[entry[1]:])
            entry[1] = len(self.facts)
        return entry[0]

    def limit(self, k, units: int):
        """Solver k's budget for each check from now on, in Z3 resource units: deterministic, not wall time, so
        verdicts do not depend on load (set only when it changes: a parameter update reaches into the solver)."""
        entry = self._hs[k]
        if entry[2] != units:
            entry[0].set("rlimit", units)
            entry[2] = units

    def _prune(self, cands, hyp, goal, rounds=None):
        """The candidates whose goal holds under facts + hyp (`rounds=1`: those the first counterexample does
        not refute, all of them if there is none); the default solver takes over where the linear one gives
        up, and nothing is kept where both do (rather than guess)."""
        live = list(cands)
        for k in (0, 1):
            kept = self._prune_with(self.solver(k), live, hyp, goal, rounds)
            if kept is not None:
                return kept
        return []

    @staticmethod
    def _prune_with(s, live, hyp, goal, rounds=None):
        """One solver call per counterexample found (at most `rounds` calls); None if the solver gives up."""
        if not live:
            return live
        negated = {id(c): _negate(goal(c)) for c in live}
        s.push()
        s.add(hyp)
        try:
            calls = 0
            while live and calls != rounds:
                calls += 1
                s.push()
                s.add(_nary(z3.Z3_mk_or, [negated[id(c)] for c in live], s.ctx))
                r = s.check()
                m = s.model() if r == z3.sat else None
                s.pop()
                if r == z3.unsat:
                    return live
                if m is None:
                    return None
                live = [c for c in live if z3.is_true(m.eval(goal(c), model_completion=True))]
            return live
        finally:
            s.pop()

    def _loop_result(self, loop, k, is_bool):
        self._loop(loop)
        self._loop_vars(loop)
        return self.memo.get(loop.results[k]) or self._opaque(loop.results[k], "loop result", is_bool)

    def _if_result(self, op, k, is_bool):
        cond = self.val(op.operands[0])
        then_y = terminator(op.regions[0].blocks[0]).operands[k]
        else_y = terminator(op.regions[1].blocks[0]).operands[k] if len(op.regions[1].blocks) else None
        a, b = self.val(then_y), self.val(else_y) if else_y is not None else None
        if cond is None or a is None or b is None:
            return self._opaque(op.results[k], "scf.if result", is_bool)
        return z3.If(cond, a, b)

    # -- path condition of an op: enclosing scf.if branches
    def path_condition(self, op):
        """What holds where `op` runs: the enclosing branches taken, loops running, a while's condition, the
        branches into its block of a function body that is a graph. A function of the op's block, so made once
        per block (every index site and loop asks: climbing the parents through the bindings cost more than
        the terms)."""
        parent = op.parent
        if parent is None:
            return z3.BoolVal(True, self.ctx)
        block = op.block
        out = self._paths.get(block)
        if out is None:
            out = self._paths[block] = self._path_condition(op)
        return out

    def _path_condition(self, op):
        conds = []
        cur = op
        while True:
            parent = cur.parent
            if parent is None:
                break
            parent = getattr(parent, "operation", parent)
            if parent.name == "scf.if":
                region = cur.block.region
                c = self.val(parent.operands[0])
                if c is not None:
                    conds.append(c if region == parent.regions[0] else _negate(c))
            if parent.name == "scf.for":
                conds.append(self._range(parent))
            if parent.name == "scf.while" and cur.block.region == parent.regions[1]:
                c = self.val(_terminator(parent.regions[0]).operands[0])
                if c is not None:
                    conds.append(c)
            if parent.name == "tt.func":
                c = self._block_condition(cur.block)
                if c is not None:
                    conds.append(c)
                break
            if parent.name == "builtin.module":
                break
            cur = parent
        return _nary(z3.Z3_mk_and, conds, self.ctx) if conds else z3.BoolVal(True, self.ctx)

    def _block_condition(self, block):
        """Where a function's body is a graph of blocks (a runtime `return`: `if i < 0: return` branches with
        `cf.cond_br` to a block holding the rest), what reaching `block` implies: the branch taken into it, and
        what reaching that branch implies, along single predecessors of a graph with no back edge (else None)."""
        if self._cfg is None:   # one encoder per function: its body's graph, read once
            blocks = list(block.region.blocks)
            preds, succs = {}, {}
            for i, b in enumerate(blocks):
                term = terminator(b)
                if term is None or term.name not in ("cf.br", "cf.cond_br"):
                    continue
                for k, succ in enumerate(term.successors):
                    j = next(n for n, x in enumerate(blocks) if x == succ)
                    succs.setdefault(i, []).append(j)
                    preds.setdefault(j, []).append((i, term, k))
            self._cfg = (blocks, preds, _has_cycle(succs))
        blocks, preds, back = self._cfg
        j = next(n for n, x in enumerate(blocks) if x == block)
        if back or j == 0 or len(preds.get(j, [])) != 1:
            return None
        i, term, k = preds[j][0]
        before = self._block_condition(blocks[i])
        two_ways = term.name == "cf.cond_br" and term.successors[0] != term.successors[1]
        c = self.val(term.operands[0]) if two_ways else None
        if c is None:   # an unconditional branch, or a condition not modelled: what reaching the branch implies
            return before
        taken = c if k == 0 else _negate(c)
        return taken if before is None else _nary(z3.Z3_mk_and, [before, taken], self.ctx)

    # -- the expression in the kernel's names
    def text(self, v, depth=0, top=None) -> str:
        """The value's expression in the kernel's names. A subexpression's name is its own only when it is not
        the whole statement's (`top`): Triton names every op of `last = a.index((it - 1) % 2).load()` `last`,
        which made the index `last % 2`."""
        if depth > 6:
            return "..."
        if isinstance(v, ir.BlockArgument):
            term = self.val(v)
            return term.decl().name() if term is not None and z3.is_const(term) else "?"
        op = getattr(v.owner, "operation", v.owner)
        name, _ = loc_info(op.location, self.path)
        if depth == 0:
            top = name
        if op.name == "arith.constant":
            return str(op.attributes["value"]).split(":")[0].strip()
        if depth > 0 and name and name != top and op.name not in _TRANSPARENT:
            return name
        if op.name in _TRANSPARENT:
            return self.text(op.operands[0], depth, top)
        if op.name == "arith.cmpi":
            p = _CMP_TEXT.get(_attr_int(op, "predicate"), "?")
            return f"({self.text(op.operands[0], depth + 1, top)} {p} {self.text(op.operands[1], depth + 1, top)})"
        if op.name in _TEXT:
            inner = _TEXT[op.name].format(*(self.text(a, depth + 1, top) for a in op.operands))
            return f"({inner})" if depth else inner
        term = self.val(v)
        return name or (str(term) if term is not None else op.name)
