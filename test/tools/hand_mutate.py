"""Mutants of hand-aliased kernels (the corpus, test/corpus) and a brute-force oracle that runs them.

`python test/tools/mutate.py --corpus` drives this. The project's lowered kernels are mutated through their
`tlx.view` metadata (mutate.py); code written elsewhere has none: its aliasing lives in ring counters,
toggles, subslices and reinterprets, so the bugs worth injecting are the ones an author makes there. Each
operator edits the ttgir text of a kernel that verifies clean, one site per mutant:

    ring_wrap          a ring counter wraps one past its end: the constant N of `c % N` / `next == N`
                       that selects a buffer of an N-deep allocation becomes N + 1
    shrink_allocation  a multi-buffer allocation one buffer short (a 1-D one half as long), every use's
                       type with it
    view_wrong_bytes   a subslice (`memdesc_subslice`, `tmem_subslice`) one slice width (TMEM: one column)
                       higher or lower: a view on the wrong bytes
    index_plus_one     one `memdesc_index` selects buffer i + 1 (index_minus_one: i - 1)

Oracle (`judge`): no Z3 and nothing of `tlx_alias`; its own line parser of Triton's ttgir and a concrete
interpreter of the kernel's integer program (scf.for / scf.while / scf.if, warp_specialize partitions run
one after the other, program 0 of 1, every integer argument equal to each of ARGS in turn, and for a kernel
of two or three integer arguments each of them at 0 with the others at 3; a run it cannot finish (an
unmodelled op on that path, a division by zero, too many steps) is left out, and a kernel none of whose
runs finishes gets no verdict). It follows every descriptor to its allocation and footprint (bytes, or TMEM
columns; a slice along an inner dimension: its first to last byte in the source's row-major order) and, on
every access whose predicate holds (loads, stores, barrier ops), calls the kernel unsafe when:
  bounds    an index on the descriptor's way is outside [0, buffers), or the footprint leaves the allocation
            (and a TMEM subslice that does not start on a 32-bit column, which triton 3.9 refuses, 3.6 accepts)
  stages    two views of one allocation (the allocation, reinterprets of it with a buffer dimension) touch
            overlapping bytes at different buffer indices (DESIGN section 5, P2/P3)
  borrows   two reinterprets of one buffer at one selection of it (the same execution of its
            `memdesc_index`), neither derived from the other nor the same borrow made again in another
            block (same bytes, type and source line), overlap (P8: alpha inside P)
It is bounded: a mutant unsafe only for other argument values is judged safe here.
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field

ARGS = (0, 1, 3, 9)         # each integer argument of the kernel, one run per value
MIXED_UP_TO = 3             # kernels of up to this many integer arguments also get one at 0, the others at 3
MAX_STEPS = 200_000         # ops per run
NAME = r"%[\w$.-]+(?:#\d+)?"
_MEMDESC = re.compile(r"!ttg\.memdesc<((?:\d+x)*)(\w+), ([^,>]+)")
_BYTES = {"i1": 1, "i8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8,
          "f8E4M3FN": 1, "f8E5M2": 1}


class Unsupported(Exception):
    """The kernel uses something the oracle does not model (it then gives no verdict)."""


def strip_locs(line: str) -> str:
    """The line without its `loc(...)` parts (they nest parentheses)."""
    out, k = [], 0
    while True:
        j = line.find("loc(", k)
        if j < 0 or (j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_.")):
            if j < 0:
                out.append(line[k:])
                break
            out.append(line[k:j + 4])
            k = j + 4
            continue
        out.append(line[k:j])
        depth, i = 0, j + 3
        while i < len(line):
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            i += 1
            if depth == 0:
                break
        k = i
    return re.sub(r"\s+$", "", "".join(out))


# ---------------------------------------------------------------------------------------------- parsing

@dataclass
class Op:
    line: int                  # 0-based line in the text
    text: str                  # without locations
    regions: list = field(default_factory=list)      # [(header text, [Op])]


def parse(text: str) -> tuple:
    """(kernel argument names, [Op] of the first `tt.func`'s body, alias definitions {"#tmem": text})."""
    lines = text.splitlines()
    aliases = {m.group(1): m.group(2) for m in (re.match(r"(#\w+) = (.*)", ln) for ln in lines) if m}
    start = next(n for n, ln in enumerate(lines) if "tt.func" in ln)
    head = strip_locs(lines[start])
    args = re.findall(rf"({NAME}): i(?:32|64)\b", head)
    root: list = []
    stack = [root]                      # the op list being filled
    owners: list = []                   # Op whose region is open, per level
    for n in range(start + 1, len(lines)):
        s = strip_locs(lines[n]).strip()
        if not s or s.startswith("#loc"):
            continue
        if s.startswith("}"):
            stack.pop()
            if not owners:
                break
            owner = owners.pop()
            rest = s[1:].strip()
            if rest.endswith("{"):       # `} do {`, `} else {`
                owner.regions.append((rest, []))
                stack.append(owner.regions[-1][1])
                owners.append(owner)
            if not stack:
                break
            continue
        if re.match(r"(default|partition\d+\(.*\)).*\{$", s):   # a warp_specialize region
            owner = stack[-1][-1]
            owner.regions.append((s, []))
            stack.append(owner.regions[-1][1])
            owners.append(owner)
            continue
        op = Op(n, s)
        stack[-1].append(op)
        if s.endswith("{") or s.endswith("({"):
            op.regions.append((s, []))
            stack.append(op.regions[-1][1])
            owners.append(op)
    return args, root, aliases


# ---------------------------------------------------------------------------------------------- values

@dataclass(frozen=True)
class Desc:
    """A shared / tensor memory descriptor: where it lies in its allocation and how it got there."""
    alloc: int                 # line of the allocation
    space: str                 # "smem" (unit: byte) | "tmem" (unit: 32-bit column)
    lo: int                    # first unit
    dims: tuple
    elem: str
    cols: int                  # TMEM: columns of one element row of the last dim (else 0)
    faults: tuple = ()         # out-of-range indices met on the way
    view: tuple = None         # (line of the view, index) once indexed: its stage
    sel: int = -1              # which execution of a memdesc_index selected the buffer
    chain: tuple = ()          # lines of the slices / reinterprets since that selection
    borrow: bool = False       # a reinterpret on the way since the selection
    span: int = 0              # SMEM bytes from lo to the last byte, where not contiguous (an inner-dim slice)

    @property
    def size(self) -> int:
        if self.space == "tmem":
            return self.cols
        return self.span or math.prod(self.dims) * _BYTES[self.elem]


def _memdesc(type_text: str, aliases: dict):
    m = _MEMDESC.search(type_text)
    if not m:
        raise Unsupported(f"not a memdesc type: {type_text}")
    dims = tuple(int(d) for d in m.group(1).rstrip("x").split("x") if d)
    elem, enc = m.group(2), m.group(3).strip()
    cols = 0
    if "tensor_memory" in type_text:
        stride = 1
        enc_text = aliases.get(enc, enc)
        cs = re.search(r"colStride = (\d+)", enc_text)
        if cs:
            stride = int(cs.group(1))
        elif "tensor_memory_scales" in enc_text:
            raise Unsupported("TMEM scales")
        # 32-bit columns of one buffer: the last dim's elements, packed 32 / (bits * colStride) per column
        cols = max(1, dims[-1] * _BYTES[elem] * stride // 4) if dims else 0
    return dims, elem, cols


def _result_type(s: str) -> str:
    return s.rsplit("->", 1)[-1] if "->" in s else s.rsplit(":", 1)[-1]


class Unsafe(Exception):
    pass


class Run:
    """One concrete run of a kernel: `problems` collects why it is unsafe."""

    def __init__(self, args, body, aliases, sizes, values):
        self.aliases, self.sizes, self.steps, self.sel = aliases, sizes, 0, 0
        self.problems: list = []
        self.stages: dict = {}          # alloc -> {(view, index): (lo, hi, line)}
        self.borrows: dict = {}         # (alloc, sel) -> {chain: (lo, hi, line, (dims, elem))}
        env = dict(zip(args, values))
        self.block(body, env)

    # -- helpers
    def get(self, env, name):
        if name not in env:
            raise Unsupported(f"{name} has no value")
        return env[name]

    def int_of(self, env, name):
        v = self.get(env, name)
        if not isinstance(v, int):
            raise Unsupported(f"{name} is not an integer known to the run")
        return int(v)

    def bind(self, env, names, values):
        for n, v in zip(names, values):
            env[n] = v
            base = n.split("#")[0]
            env[base] = v

    def results(self, env, op, values):
        m = re.match(rf"({NAME})(?::(\d+))? = ", op.text)
        if not m:
            return
        name = m.group(1)
        if m.group(2):
            for k, v in enumerate(values):
                env[f"{name}#{k}"] = v
        else:
            env[name] = values[0] if values else None

    # -- execution
    def block(self, ops, env):
        for op in ops:
            out = self.op(op, env)
            if out is not None:
                return out
        return None

    def op(self, op, env):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported("run too long")
        s = op.text
        if s.startswith("^bb"):
            return None
        m = re.match(rf"(?:({NAME})(?::\d+|(?:, {NAME})+)? = )?\"?([\w.]+)\"?", s)
        name = m.group(2)
        if name in ("scf.yield", "ttg.warp_yield", "ttg.warp_return", "tt.reduce.return", "scf.condition"):
            return (name, s)
        if name == "scf.for":
            return self.for_(op, env)
        if name == "scf.while":
            return self.while_(op, env)
        if name == "scf.if":
            return self.if_(op, env)
        if name == "ttg.warp_specialize":
            return self.ws(op, env)
        if op.regions and name not in ("tt.reduce", "tt.scan", "tt.map_elementwise"):   # regions on registers
            raise Unsupported(f"region op {name}")
        self.simple(name, op, env)
        return None

    def simple(self, name, op, env):
        s = op.text
        res = re.match(rf"({NAME})((?:, {NAME})*) = ", s)
        more = re.findall(NAME, res.group(2)) if res else []   # `%a, %b = tt.split ...`: tensors, no value here
        res = res and res.group(1)
        ops = re.findall(NAME, s.split("=", 1)[1] if res else s)
        for x in more:
            env[x] = None
        if name == "arith.constant" and re.search(r"arith\.constant (true|false)\b", s):
            env[res] = "arith.constant true" in s
            return
        if name == "arith.constant":
            c = re.search(r"arith\.constant (?:\{[^}]*\} )?(-?\d+) : (i\d+|index)\b", s)
            env[res] = int(c.group(1)) if c else None
            return
        if name in ("tt.get_program_id",):
            env[res] = 0
            return
        if name in ("tt.get_num_programs",):
            env[res] = 1
            return
        if name in _ARITH:
            vals = [env.get(x) for x in ops[:3]]
            if res and any(v is None for v in vals[:_ARITY.get(name, 2)]):
                env[res] = None
                return
            if res:
                env[res] = _ARITH[name](s, *vals)
            return
        if name in ("ttg.local_alloc", "ttng.tmem_alloc"):
            dims, elem, cols = _memdesc(_result_type(s), self.aliases)
            space = "tmem" if name == "ttng.tmem_alloc" else "smem"
            d = Desc(op.line, space, 0, dims, elem, cols)
            env[res] = d
            if ops[1:] if res else ops:     # alloc with an initial value: a write
                self.access(d, op)
            return
        if name == "ttg.memdesc_index":
            src, idx = ops[0], ops[1]
            d, i = self.get(env, src), self.int_of(env, idx)
            if not isinstance(d, Desc) or d.span:
                raise Unsupported("memdesc_index of an unknown descriptor or of a slice along an inner dimension")
            dims, elem, cols = _memdesc(_result_type(s), self.aliases)
            per = d.cols if d.space == "tmem" else math.prod(d.dims[1:]) * _BYTES[d.elem]
            faults = d.faults + ((f"index {i} of {d.dims[0]} at line {op.line + 1}",) if not 0 <= i < d.dims[0] else ())
            self.sel += 1
            env[res] = Desc(d.alloc, d.space, d.lo + i * per, dims, elem, cols, faults,
                            d.view if d.view is not None else (d.chain[-1] if d.chain else d.alloc, i), self.sel)
            return
        if name in ("ttg.memdesc_subslice", "ttng.tmem_subslice", "ttg.memdesc_reinterpret",
                    "ttg.memdesc_trans", "ttg.memdesc_reshape"):
            d = self.get(env, ops[0])
            if not isinstance(d, Desc):
                raise Unsupported(f"{name} of an unknown descriptor")
            if d.span and name not in ("ttg.memdesc_trans", "ttg.memdesc_reshape"):   # those keep its bytes
                raise Unsupported(f"{name} of a slice along an inner dimension")
            dims, elem, cols = _memdesc(_result_type(s), self.aliases)
            lo, span = d.lo, d.span
            if name == "ttg.memdesc_subslice":
                offs = [int(x) for x in re.search(r"\[([-\d, ]+)\]", s).group(1).split(",")]
                strides = [math.prod(d.dims[k + 1:]) for k in range(len(d.dims))]
                lo += sum(o * st for o, st in zip(offs, strides)) * _BYTES[d.elem]
                if len(dims) > 1 and any(o for o in offs[1:]):
                    # its elements in the source's row-major order, first to last: a hull, inside the
                    # selected buffer whenever the slice is inside its source (Triton checks that)
                    span = (sum((n - 1) * st for n, st in zip(dims, strides)) + 1) * _BYTES[d.elem]
            elif name == "ttng.tmem_subslice":
                off = int(re.search(r"\{(?:offset|N) = (-?\d+)", s).group(1))   # `N` before triton 3.7
                if off * d.cols % d.dims[-1]:
                    self.problems.append(f"bounds: TMEM subslice at element {off} of {d.dims[-1]} is not on a 32-bit "
                                         f"column (line {op.line + 1})")
                lo += off * d.cols // d.dims[-1]
            if d.view is None:             # still the whole allocation: a view of it (its stage named by this line)
                env[res] = Desc(d.alloc, d.space, lo, dims, elem, cols, d.faults, None, -1, d.chain + (op.line,),
                                span=span)
            else:                          # a part of one selected buffer; a reinterpret makes it a borrow
                env[res] = Desc(d.alloc, d.space, lo, dims, elem, cols, d.faults, d.view, d.sel, d.chain + (op.line,),
                                d.borrow or name == "ttg.memdesc_reinterpret", span)
            return
        if name in ("tt.load",) and res:
            env[res] = None
            return
        # anything else: an access through each descriptor operand, under its predicate
        descs = [env.get(x) for x in ops if isinstance(env.get(x), Desc)]
        if descs:
            pred = env.get(ops[-1]) if ops else None
            if pred is False:
                return
            for d in descs:
                self.access(d, op)
        if res:
            # without `->` the trailing types are the operands' (tc_gen5_mma's result is a token)
            if "!ttg.memdesc" in _result_type(s) and ("->" in s or not descs):
                raise Unsupported(f"{name} makes a descriptor")
            env[res] = None

    def access(self, d: Desc, op):
        where = f"line {op.line + 1}"
        for f in d.faults:
            self.problems.append(f"bounds: {f}, used at {where}")
        hi = d.lo + d.size
        limit = self.sizes[d.alloc]
        if d.lo < 0 or hi > limit:
            self.problems.append(f"bounds: [{d.lo}, {hi}) outside the {limit}-unit allocation at line "
                                 f"{d.alloc + 1}, used at {where}")
        if d.view is not None:
            cells = self.stages.setdefault(d.alloc, {})
            key = d.view
            lo0, hi0, _ = cells.get(key, (d.lo, hi, where))
            cells[key] = (min(lo0, d.lo), max(hi0, hi), where)
            if d.borrow:
                self.borrows.setdefault((d.alloc, d.sel), {})[d.chain] = (d.lo, hi, where, (d.dims, d.elem))

    # -- structured ops
    def for_(self, op, env):
        s = op.text
        m = re.search(rf"scf\.for ({NAME}) = ({NAME}) to ({NAME}) step ({NAME})", s)
        iv, lb, ub, st = m.groups()
        lb, ub, st = self.int_of(env, lb), self.int_of(env, ub), self.int_of(env, st)
        names, vals = self.iter_args(s, env)
        i = lb
        while (i < ub if st > 0 else i > ub):
            inner = dict(env)
            inner[iv] = i
            self.bind(inner, names, vals)
            out = self.block(op.regions[0][1], inner)
            vals = self.yielded(out, inner)
            i += st
        self.results(env, op, vals)

    def iter_args(self, s, env):
        m = re.search(r"iter_args\((.*?)\) ->", s) or re.search(r"scf\.while \((.*?)\) :", s)
        if not m:
            return [], []
        pairs = re.findall(rf"({NAME}) = ({NAME})", m.group(1))
        return [a for a, _ in pairs], [env.get(b) for _, b in pairs]

    def yielded(self, out, env):
        if out is None:
            return []
        _, text = out
        body = text.split(" : ")[0]
        if out[0] == "scf.condition":
            body = body.split(")", 1)[1]
        else:
            body = body.split(" ", 1)[1] if " " in body else ""
        return [env.get(x) for x in re.findall(NAME, body)]

    def while_(self, op, env):
        names, vals = self.iter_args(op.text, env)
        before, after = op.regions[0][1], op.regions[1][1]
        bb = re.match(r"\^bb\d+\((.*)\):?", after[0].text) if after and after[0].text.startswith("^bb") else None
        after_names = re.findall(rf"({NAME}):", bb.group(1)) if bb else []
        body = after[1:] if bb else after
        while True:
            inner = dict(env)
            self.bind(inner, names, vals)
            out = self.block(before, inner)
            cond = re.match(rf"scf\.condition\(({NAME})\)", out[1]).group(1)
            c = inner.get(cond)
            if not isinstance(c, bool):
                raise Unsupported("a while condition the run cannot compute")
            vals = self.yielded(out, inner)
            if not c:
                break
            inner = dict(env)
            self.bind(inner, after_names, vals)
            vals = self.yielded(self.block(body, inner), inner)
        self.results(env, op, vals)

    def if_(self, op, env):
        c = self.get(env, re.search(rf"scf\.if ({NAME})", op.text).group(1))
        if not isinstance(c, bool):
            raise Unsupported("an if condition the run cannot compute")
        region = op.regions[0][1] if c else (op.regions[1][1] if len(op.regions) > 1 else [])
        inner = dict(env)
        self.results(env, op, self.yielded(self.block(region, inner), inner))

    def ws(self, op, env):
        captured = [env.get(x) for x in re.findall(NAME, op.text.split("ttg.warp_specialize(", 1)[1].split(")")[0])]
        for header, ops in op.regions:
            inner = dict(env)
            if header.startswith("partition"):
                names = re.findall(rf"({NAME}):", header)
                inner = {}
                self.bind(inner, names, captured)
            self.block(ops, inner)


def _cmp(s, a, b):
    pred = re.search(r"arith\.cmpi (\w+)", s).group(1)
    ua, ub = a % (1 << 32), b % (1 << 32)
    return {"eq": a == b, "ne": a != b, "slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b,
            "ult": ua < ub, "ule": ua <= ub, "ugt": ua > ub, "uge": ua >= ub}[pred]


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_ARITH = {
    "arith.addi": lambda s, a, b, *_: a + b, "arith.subi": lambda s, a, b, *_: a - b,
    "arith.muli": lambda s, a, b, *_: a * b, "arith.divsi": lambda s, a, b, *_: _tdiv(a, b),
    "arith.remsi": lambda s, a, b, *_: a - b * _tdiv(a, b), "arith.floordivsi": lambda s, a, b, *_: a // b,
    "arith.ceildivsi": lambda s, a, b, *_: -((-a) // b), "arith.divui": lambda s, a, b, *_: a // b,
    "arith.remui": lambda s, a, b, *_: a % b, "arith.andi": lambda s, a, b, *_: a & b,
    "arith.ori": lambda s, a, b, *_: a | b, "arith.xori": lambda s, a, b, *_: a ^ b,
    "arith.shli": lambda s, a, b, *_: a << b, "arith.shrsi": lambda s, a, b, *_: a >> b,
    "arith.shrui": lambda s, a, b, *_: a >> b, "arith.maxsi": lambda s, a, b, *_: max(a, b),
    "arith.minsi": lambda s, a, b, *_: min(a, b), "arith.cmpi": lambda s, a, b, *_: _cmp(s, a, b),
    "arith.select": lambda s, c, a, b: a if c else b,
    "arith.extsi": lambda s, a, *_: a, "arith.extui": lambda s, a, *_: a, "arith.trunci": lambda s, a, *_: a,
    "arith.index_cast": lambda s, a, *_: a, "arith.index_castui": lambda s, a, *_: a,
}
_ARITY = {"arith.select": 3, "arith.extsi": 1, "arith.extui": 1, "arith.trunci": 1, "arith.index_cast": 1,
          "arith.index_castui": 1}


_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")


def _sources(lines) -> dict:
    """{line: "file:LINE"} of every op line: the innermost file location of its `loc(...)` (a callee's line
    for a call site, the named value's for a name)."""
    defs = {m.group(1): m.group(2) for m in map(_LOC_DEF.match, lines) if m}

    def resolve(text, depth=0):
        text = text.strip()
        if depth > 64:
            return None
        if text in defs:
            return resolve(defs[text], depth + 1)
        if text.startswith("callsite("):
            return resolve(text[len("callsite("):].split(" at ", 1)[0], depth + 1)
        m = re.match(r'"([^"]*)":(\d+)', text)
        if m:
            return f"{m.group(1)}:{m.group(2)}"
        m = re.match(r'"[^"]*"\((.*)\)$', text)      # a name: loc("alpha"(#loc12))
        return resolve(m.group(1), depth + 1) if m else None
    out = {}
    for n, ln in enumerate(lines):
        m = re.search(r"loc\((#loc\d*|\"[^\"]*\":\d+:\d+)\)\s*$", ln)
        if m and not ln.startswith("#loc"):
            out[n] = resolve(m.group(1))
    return out


def _blocks(ops, out=None, ids=None) -> dict:
    """{line: which block it is in} for every op under `ops`."""
    out, ids = ({}, itertools.count()) if out is None else (out, ids)
    n = next(ids)
    for op in ops:
        out[op.line] = n
        for _, inner in op.regions:
            _blocks(inner, out, ids)
    return out


def judge(text: str) -> list:
    """Why a kernel's ttgir is unsafe on the runs (empty: safe on every run); raises Unsupported."""
    args, body, aliases = parse(text)
    sizes = {}
    lines = text.splitlines()
    for n, ln in enumerate(lines):
        m = re.search(r"= (ttg\.local_alloc|ttng\.tmem_alloc)\b", ln)
        if m:
            d = Desc(n, "tmem" if "tmem" in m.group(1) else "smem", 0,
                     *_memdesc(_result_type(strip_locs(ln)), aliases))
            sizes[n] = d.cols * (d.dims[0] if len(d.dims) > 2 else 1) if d.space == "tmem" else d.size
    problems, skipped, block, src = [], [], _blocks(body), _sources(lines)
    runs = _argument_values(len(args))
    for values in runs:
        try:
            run = Run(args, body, aliases, sizes, values)
        except (Unsupported, ZeroDivisionError) as exc:   # a run these values cannot take: judged on the others
            skipped.append(f"{exc} (arguments = {', '.join(map(str, values))})")
            continue
        problems += [p for p in run.problems if p not in problems]
        for alloc, cells in run.stages.items():
            items = sorted(cells.items())
            for x, ((va, ia), (la, ha, wa)) in enumerate(items):
                for (vb, ib), (lb, hb, wb) in items[x + 1:]:
                    if ia != ib and la < hb and lb < ha:
                        p = (f"stages: view at line {va + 1} buffer {ia} [{la}, {ha}) ({wa}) overlaps view at line "
                             f"{vb + 1} buffer {ib} [{lb}, {hb}) ({wb})")
                        if p not in problems:
                            problems.append(p)
        for (alloc, sel), tenants in run.borrows.items():
            items = sorted(tenants.items())
            for x, (ca, (la, ha, wa, ta)) in enumerate(items):
                for cb, (lb, hb, wb, tb) in items[x + 1:]:
                    related = ca[:len(cb)] == cb or cb[:len(ca)] == ca
                    equal = (la, ha, ta) == (lb, hb, tb) and _made_again(ca[-1], cb[-1], block, src)
                    if not related and not equal and la < hb and lb < ha:
                        p = f"borrows: [{la}, {ha}) ({wa}) overlaps [{lb}, {hb}) ({wb}) in one buffer"
                        if p not in problems:
                            problems.append(p)
    if len(skipped) == len(runs):
        raise Unsupported("; ".join(skipped))
    return problems


def _made_again(a: int, b: int, block: dict, src: dict) -> bool:
    """Are the ops at lines a and b one borrow made twice: in different blocks, at one source line (a helper
    inlined twice; P's view made in the loop and again after it)?"""
    return block[a] != block[b] and src.get(a) is not None and src.get(a) == src.get(b)


def _argument_values(n: int) -> list:
    """The runs' integer arguments: all equal to each of ARGS; for a kernel of two or three, also each one at
    0 with the others at 3 (a loop nest whose inner loop takes no step: `n_tiles = 3, k_steps = 0`)."""
    runs = [(v,) * n for v in ARGS]
    if 2 <= n <= MIXED_UP_TO:
        runs += [tuple(0 if i == k else 3 for i in range(n)) for k in range(n)]
    return runs


# ---------------------------------------------------------------------------------------------- operators

class _Text:
    """Edits of a kernel's ttgir: replace lines, insert lines before a line."""

    def __init__(self, text):
        self.lines, self.before, self.n = text.splitlines(), {}, 0

    def fresh(self, at, body):
        self.n += 1
        name = f"%hmut{self.n}"
        indent = re.match(r"\s*", self.lines[at]).group(0)
        self.before.setdefault(at, []).append(f"{indent}{name} = {body}")
        return name

    def text(self):
        out = []
        for n, ln in enumerate(self.lines):
            out += self.before.get(n, [])
            out.append(ln)
        return "\n".join(out) + "\n"


def _allocs(text):
    """[(line, result name, dims, type text)] of the allocations that are not TLX backings."""
    out = []
    for n, ln in enumerate(text.splitlines()):
        m = re.match(rf"\s*({NAME}) = (?:ttg\.local_alloc|ttng\.tmem_alloc)\b", ln)
        if m and "tlx.backing" not in ln:
            t = re.search(r"!ttg\.memdesc<[^>]*>", ln.split("->")[-1]).group(0)
            dims = [int(d) for d in _MEMDESC.search(t).group(1).rstrip("x").split("x") if d]
            out.append((n, m.group(1), dims, t))
    return out


def _constants(lines):
    """{SSA name: integer value} of the integer constants."""
    out = {}
    for ln in lines:
        m = re.match(rf"\s*({NAME}) = arith\.constant (-?\d+) : i(?:32|64)", ln)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def ring_wrap(text):
    """Where a constant N that wraps a counter (`remsi x, N`, `cmpi eq, x, N`) equals the depth of a
    multi-buffer allocation, N + 1 instead (one site per mutant)."""
    lines = text.splitlines()
    consts = _constants(lines)
    depths = {d[0] for _, _, d, _ in _allocs(text) if len(d) > 1 and d[0] > 1}
    for n, ln in enumerate(lines):
        m = re.search(rf"arith\.(remsi|remui) ({NAME}), ({NAME})", ln) or \
            re.search(rf"arith\.cmpi eq, ({NAME}), ({NAME})", ln)
        if not m:
            continue
        c = m.group(m.lastindex)
        if consts.get(c) not in depths:
            continue
        e = _Text(text)
        new = e.fresh(n, f"arith.constant {consts[c] + 1} : i32")
        e.lines[n] = ln[:m.start(m.lastindex)] + new + ln[m.end(m.lastindex):]
        yield f"line {n + 1}: wraps at {consts[c] + 1} (was {consts[c]})", e.text()


def shrink_allocation(text):
    """A multi-buffer allocation (one that a `memdesc_index` selects from) one buffer short (1-D: half as long);
    the type changes everywhere it is written, so the kernel stays well typed. Skipped when another allocation
    has the same type, and for a single tile (a TMEM accumulator, an epilogue tile): one row short is another
    shape, which its users' types no longer match."""
    allocs = _allocs(text)
    for n, name, dims, t in allocs:
        if sum(1 for a in allocs if a[3] == t) > 1 or dims[0] < 2:
            continue
        if len(dims) > 1 and not re.search(rf"ttg\.memdesc_index {re.escape(name)}\[", text):
            continue
        new_dims = [dims[0] // 2] if len(dims) == 1 else [dims[0] - 1] + dims[1:]
        old = "x".join(map(str, dims)) + "x"
        new = "x".join(map(str, new_dims)) + "x"
        nt = t.replace("<" + old, "<" + new, 1)
        out = text.replace(t, nt)
        if len(dims) == 1:   # slices name their allocation's shape last: `..., mutable, 2048>`
            out = re.sub(rf"(!ttg\.memdesc<[^>]*, ){dims[0]}>", rf"\g<1>{new_dims[0]}>", out)
        yield f"{name} {old[:-1]} -> {new[:-1]} buffers", out


def view_wrong_bytes(text):
    """A subslice moved by its own width (SMEM) or by one column (TMEM), up and down."""
    for n, ln in enumerate(text.splitlines()):
        m = re.search(r"(ttg\.memdesc_subslice [^\[]+\[)(-?\d+)((?:, *-?\d+)*\])", ln)
        if m:
            width = int(_MEMDESC.search(_result_type(ln.split(" loc(")[0])).group(1).split("x")[0])
            for d in (width, -width):
                lines = text.splitlines()
                lines[n] = ln[:m.start(2)] + str(int(m.group(2)) + d) + ln[m.end(2):]
                yield f"line {n + 1}: slice at {int(m.group(2)) + d} (was {m.group(2)})", "\n".join(lines) + "\n"
        m = re.search(r"ttng\.tmem_subslice .*\{(?:offset|N) = (-?\d+) : i32\}", ln)
        if m:
            for d in (1, -1):
                lines = text.splitlines()
                lines[n] = ln[:m.start(1)] + str(int(m.group(1)) + d) + ln[m.end(1):]
                yield f"line {n + 1}: subslice at column {int(m.group(1)) + d} (was {m.group(1)})", \
                    "\n".join(lines) + "\n"


def _index_moved(text, op, sign):
    for n, ln in enumerate(text.splitlines()):
        m = re.search(rf"ttg\.memdesc_index ({NAME})\[({NAME})\]", ln)
        if not m:
            continue
        e = _Text(text)
        one = e.fresh(n, "arith.constant 1 : i32")
        new = e.fresh(n, f"arith.{op} {m.group(2)}, {one} : i32")
        e.lines[n] = ln[:m.start(2)] + new + ln[m.end(2):]
        yield f"line {n + 1}: {m.group(1)}[{m.group(2)} {sign} 1]", e.text()


def index_plus_one(text):
    """One `memdesc_index` selects buffer i + 1."""
    yield from _index_moved(text, "addi", "+")


def index_minus_one(text):
    """One `memdesc_index` selects buffer i - 1 (the previous stage's buffer; -1 at the first)."""
    yield from _index_moved(text, "subi", "-")


OPERATORS = {"ring_wrap": ring_wrap, "shrink_allocation": shrink_allocation, "view_wrong_bytes": view_wrong_bytes,
             "index_plus_one": index_plus_one, "index_minus_one": index_minus_one}
