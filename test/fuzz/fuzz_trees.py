"""Fuzz the API with random reuse trees, compiled through the plugin, against an independent oracle.

    python test/fuzz/fuzz_trees.py --minutes 20 [--seed N] [--save DIR]      # exit 1 on a failure
    python test/fuzz/fuzz_trees.py --seed N --case I --show                  # one case: source, oracle, outcome

Case I of seed N is drawn from `random.Random(f"{N}:{I}")`, so any case can be replayed alone. A case is one
Gluon kernel: a storage_alias_spec (SMEM, or TMEM on sm_100a; sometimes an explicit buffer_size_bytes), 1-4
allocations of random shapes, dtypes and buffer counts, a random reuse tree over them (nested shared /
distinct groups, group sizes; sometimes without set_buffer_overlap, sometimes no tree at all), and code that
stores to every buffer with constant indices (`gl.static_range`) and loads every buffer with runtime ones (an
`scf.for` induction variable, or a ring counter). It is compiled for sm_90a / sm_100a on the CPU through the
plugin (lowering and proof) in a forked child (kernel_runner.py).

The oracle (`expect`) is written from the README's Semantics section and imports nothing from tlx_alias: it
computes every buffer's address per index (bytes or TMEM columns), the backing size, the expected verdict
(accepted, or which error: group counts, explicit size too small, over capacity, not a multiple of a buffer's
size) with the kernel lines the error may name, and the warnings. Failure classes (goal: 0 in each):

    crash            native abort, hang, or an exception other than TlxAliasError (a traceback)
    wrong verdict    accepted where the oracle expects an error, an error where it expects acceptance, or another
                     error than expected
    wrong offset     a lowered view's address of some buffer index, or the backing size, differs from the oracle
    unclear error    a TlxAliasError without the kernel line, or naming a line the oracle does not expect
    cannot prove     the proof could not settle a layout the oracle accepts
    missing warning  an expected warning absent, or an unexpected one
    file left behind a file left in the compile's temporary directory

test/pytest/test_fuzz_trees.py runs a short fixed-seed version in CI.
"""
from __future__ import annotations

import argparse
import collections
import importlib.metadata
import json
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_runner  # noqa: E402

SMEM_LIMIT = 232448          # bytes one block may use on sm_90 / sm_100 (README, Errors)
# README, Supported versions: on Triton 3.8 (a reinterpret keeps the whole allocation's size) the spec is rounded
# up to a multiple of every buffer size, with a warning at the spec's line
ROUND_TO_EVERY_BUFFER = tuple(int(x) for x in importlib.metadata.version("triton").split(".")[:2]) == (3, 8)
TMEM_COLUMNS = 512
TMEM_BYTES_PER_COLUMN = 128 * 4
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1}


# ---------------------------------------------------------------------------------------------- cases

@dataclass
class Leaf:
    name: str
    shape: tuple
    dtype: str
    num: int


@dataclass
class Group:
    name: str
    kind: str            # shared | distinct
    group_size: int
    children: list       # Leaf names or Groups


@dataclass
class Case:
    seed: str
    storage: str                      # smem | tmem
    arch: int                         # 90 | 100
    leaves: list                      # [Leaf], in allocation order
    tree: Group | None                # None: no reuse_group at all
    explicit: int | None              # buffer_size_bytes
    overlap: bool                     # set_buffer_overlap(tree) called (else the implicit tree)
    ring: bool                        # runtime loads through a ring counter instead of the loop variable
    groups_of: dict = field(default_factory=dict)   # leaf name -> index groups it was drawn with


def units(leaf: Leaf, storage: str) -> int:
    """One buffer in spec units: bytes (SMEM) or 32-bit columns (TMEM, 16-bit data packed two per column)."""
    if storage == "smem":
        return math.prod(leaf.shape) * ITEMSIZE[leaf.dtype]
    return leaf.shape[1] * ITEMSIZE[leaf.dtype] // 4


def draw_case(seed: int, index: int) -> Case:
    rng = random.Random(f"{seed}:{index}")
    storage = rng.choice(["smem", "smem", "tmem"])
    arch = 100 if storage == "tmem" else rng.choice([90, 100])
    leaves = []
    for j in range(rng.randint(1, 4)):
        if storage == "smem":
            dtype = rng.choice(list(ITEMSIZE))
            shape = (rng.choice([8, 16, 32, 64, 128]), rng.choice([16, 32, 64, 128]))
        else:
            dtype = rng.choice(["float32", "float32", "bfloat16", "float16"])
            widths = [1, 2, 4, 8, 16, 32, 64, 128] if dtype == "float32" else [2, 4, 16, 64, 128, 256]
            n = rng.choice(widths)
            cols = n * ITEMSIZE[dtype] // 4
            # Triton itself refuses TMEM loads/stores of a 64-row tile one column wide (plain Gluon too)
            shape = (rng.choice([128, 128, 64]) if cols > 1 else 128, n)
        leaves.append(Leaf(f"a{j}", shape, dtype, 0))
    counter = [0]

    def build(names, depth):
        if len(names) == 1 and depth > 0 and rng.random() < 0.6:
            return names[0]
        kind = rng.choice(["shared", "distinct"])
        k = rng.choice([1, 1, 2, 4]) if kind == "shared" else rng.choice([1, 1, 1, 1, 2])
        cuts = []
        if len(names) > 1:
            cuts = sorted(rng.sample(range(1, len(names)), rng.randint(0, min(2, len(names) - 1))))
        parts = [names[a:b] for a, b in zip([0] + cuts, cuts + [len(names)])]
        children = [build(p, depth + 1) for p in parts]
        counter[0] += 1
        return Group(f"g{counter[0]}", kind, k, children)

    names = [leaf.name for leaf in leaves]
    rng.shuffle(names)
    shape_of = rng.random()
    tree = None if shape_of < 0.1 else build(names, 0)
    groups_of = {}
    by_name = {leaf.name: leaf for leaf in leaves}
    for name, k in (_leaf_factors(tree) if tree else [(n, 1) for n in names]):
        g = rng.choice([1, 1, 2, 2, 3])
        num = g * k
        if rng.random() < 0.05 and k > 1:
            num += rng.randint(1, k - 1)        # not a whole number of groups: an error
        by_name[name].num = num
        groups_of[name] = g
    explicit = None
    if rng.random() < 0.3:
        natural = _natural_total(Case("", storage, arch, leaves, tree, None, True, False))
        per = TMEM_BYTES_PER_COLUMN if storage == "tmem" else 1
        explicit = max(1, int(natural * per * rng.choice([0.5, 0.9, 1, 1, 1.5, 2])))
    return Case(f"{seed}:{index}", storage, arch, leaves, tree, explicit,
                overlap=tree is not None and rng.random() < 0.8, ring=rng.random() < 0.3, groups_of=groups_of)


def _leaf_factors(node, k=1):
    """(leaf name, product of the group sizes of the shared groups above it)."""
    if isinstance(node, str):
        yield node, k
        return
    inner = k * node.group_size if node.kind == "shared" else k
    for child in node.children:
        yield from _leaf_factors(child, inner)


# ---------------------------------------------------------------------------------------------- the oracle

@dataclass
class Expect:
    verdict: str                       # ok | not-divisible | too-small | over-capacity | not-multiple | overlap
    lines: set = field(default_factory=set)          # kernel lines the error may name (markers)
    addresses: dict = field(default_factory=dict)    # leaf name -> [address of buffer i]
    total: int | None = None                         # backing units
    warnings: set = field(default_factory=set)       # markers of lines that must warn
    near_capacity: bool = False                      # SMEM close to the limit: Triton's scratch may not fit


def _size(node, case, by_name):
    if isinstance(node, str):
        return units(by_name[node], case.storage)
    sizes = [_size(c, case, by_name) for c in node.children]
    if node.kind == "shared":
        return node.group_size * max(sizes)
    running = 0
    for child, s in zip(node.children, sizes):
        running = -(-running // _align(child, case, by_name)) * _align(child, case, by_name) + s
    return running


def _widest(node, by_name, case):
    if isinstance(node, str):
        return units(by_name[node], case.storage)
    return max(_widest(c, by_name, case) for c in node.children)


def _align(node, case, by_name):
    """A distinct child's start (and the index-group stride) rounds up to 128 bytes / the widest TMEM buffer."""
    return 128 if case.storage == "smem" else _widest(node, by_name, case)


def _natural_total(case):
    by_name = {leaf.name: leaf for leaf in case.leaves}
    if case.tree is None:
        return max(leaf.num * units(leaf, case.storage) for leaf in case.leaves)
    a = _align(case.tree, case, by_name)
    stride = -(-_size(case.tree, case, by_name) // a) * a
    groups = max(1, max(by_name[n].num // k for n, k in _leaf_factors(case.tree)))
    return groups * stride


def expect(case: Case) -> Expect:
    by_name = {leaf.name: leaf for leaf in case.leaves}
    per = TMEM_BYTES_PER_COLUMN if case.storage == "tmem" else 1
    warn = set()

    def walk_groups(node):
        if isinstance(node, Group):
            if node.kind == "distinct" and node.group_size > 1:
                warn.add(f"# @group:{node.name}")
            for c in node.children:
                walk_groups(c)
    if case.tree is not None:
        walk_groups(case.tree)
        bad = [n for n, k in _leaf_factors(case.tree) if by_name[n].num % k]
        if bad:
            return Expect("not-divisible", {f"# @leaf:{n}" for n in bad}, warnings=warn)
    natural = _natural_total(case)
    total = natural
    if case.explicit is not None:
        given = case.explicit // per
        if given < natural:
            groups_lines = set()

            def all_groups(node):
                if isinstance(node, Group):
                    groups_lines.add(f"# @group:{node.name}")
                    for c in node.children:
                        all_groups(c)
            if case.tree is not None:
                all_groups(case.tree)
            return Expect("too-small", {"# @spec"} | groups_lines, warnings=warn)
        total = given
    if ROUND_TO_EVERY_BUFFER:
        tile = math.lcm(*(units(leaf, case.storage) for leaf in case.leaves))
        if total % tile:
            total = -(-total // tile) * tile
            warn.add("# @spec")
    if total > (TMEM_COLUMNS if case.storage == "tmem" else SMEM_LIMIT):
        return Expect("over-capacity", {"# @spec"}, warnings=warn)

    addresses = {}
    if case.tree is None:
        spans = {}
        for leaf in case.leaves:
            b = units(leaf, case.storage)
            addresses[leaf.name] = [i * b for i in range(leaf.num)]
            spans[leaf.name] = [(i * b, (i + 1) * b) for i in range(leaf.num)]
        # no tree: every view starts at 0, and the views are compared in lock step (README, "The safety proof",
        # P3): buffer j of a view with r times as many buffers as another belongs to stage j // r, otherwise
        # buffer i is stage i. Two buffers of different stages must not overlap.
        def stage(nx, ny, i):
            return i // (nx // ny) if nx != ny and nx % ny == 0 else i
        bad = set()
        for x in case.leaves:
            for y in case.leaves:
                if x is y:
                    continue
                for i, (a, b) in enumerate(spans[x.name]):
                    for j, (c, d) in enumerate(spans[y.name]):
                        if a < d and c < b and stage(x.num, y.num, i) != stage(y.num, x.num, j):
                            bad |= {f"# @leaf:{x.name}", f"# @leaf:{y.name}"}
        if bad:
            return Expect("overlap", bad, warnings=warn)
    else:
        a = _align(case.tree, case, by_name)
        stride = -(-_size(case.tree, case, by_name) // a) * a
        placed = {}

        def place(node, offset, path):
            if isinstance(node, str):
                placed[node] = (offset, path)
                return
            if node.kind == "shared":
                if node.group_size > 1:
                    path = path + [(node.group_size, max(_size(c, case, by_name) for c in node.children))]
                for c in node.children:
                    place(c, offset, path)
                return
            running = 0
            for c in node.children:
                al = _align(c, case, by_name)
                running = -(-running // al) * al
                place(c, offset + running, path)
                running += _size(c, case, by_name)
        place(case.tree, 0, [])
        bad = set()
        for leaf in case.leaves:
            offset, path = placed[leaf.name]
            ks = [k for k, _ in path]
            addrs = []
            for i in range(leaf.num):
                addr, rest = offset + (i // math.prod(ks)) * stride, i
                for k, u in reversed(path):
                    addr += (rest % k) * u
                    rest //= k
                addrs.append(addr)
            addresses[leaf.name] = addrs
            if any(x % units(leaf, case.storage) for x in addrs):
                bad.add(f"# @leaf:{leaf.name}")
        if bad:
            return Expect("not-multiple", bad, warnings=warn)
    near = case.storage == "smem" and total > SMEM_LIMIT - 32768
    return Expect("ok", set(), addresses, total, warn, near)


# ---------------------------------------------------------------------------------------------- the kernel

def uses(n: str, shape, dtype: str, num: int, storage: str, ring: bool) -> list:
    """Kernel lines that store to every buffer of `n` at constant indices and load each at runtime indices (the
    loop variable, or a ring counter wrapping at num), storing what they load to x_ptr."""
    r, c = shape
    out = []
    if storage == "smem":
        out.append(f"{n}_l: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])")
    else:
        out.append(f"{n}_l: gl.constexpr = compat.tmem_reg_layout(gl.{dtype}, [{r}, {c}], {n}.type.layout, 4)")
    out.append(f"{n}_p = x_ptr + gl.arange(0, {r}, layout=gl.SliceLayout(1, {n}_l))[:, None] * {c} + "
               f"gl.arange(0, {c}, layout=gl.SliceLayout(0, {n}_l))[None, :]")
    out.append(f"for i in gl.static_range({num}):")
    out.append(f"    {n}.index(i).store(gl.full([{r}, {c}], i + 1, gl.{dtype}, {n}_l))")
    if ring:
        out.append(f"{n}_j = 0")
        out.append(f"for t in range({2 * num}):")
        out.append(f"    gl.store({n}_p + t, {n}.index({n}_j).load({n}_l).to(gl.float32))")
        out.append(f"    {n}_j = {n}_j + 1")
        out.append(f"    if {n}_j == {num}:")
        out.append(f"        {n}_j = 0")
    else:
        out.append(f"for i in range({num}):")
        out.append(f"    gl.store({n}_p + i, {n}.index(i).load({n}_l).to(gl.float32))")
    return out


def module(body: list, header: str) -> str:
    """A module defining `kernel(x_ptr)` with `body` (kernel lines, unindented)."""
    lines = "\n".join("    " + line for line in body)
    return f'''# generated by {header}
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
import tlx_alias.language as tlx
from tlx_alias import _triton as compat


@gluon.jit
def kernel(x_ptr):
{lines}
'''


def source(case: Case) -> str:
    kind = f"tlx.storage_kind.{case.storage}"
    size = f", buffer_size_bytes={case.explicit}" if case.explicit is not None else ""
    body = [f"spec = tlx.storage_alias_spec(storage={kind}{size})  # @spec"]
    for leaf in case.leaves:
        body.append(f"{leaf.name} = tlx.local_alloc({leaf.shape}, gl.{leaf.dtype}, {leaf.num}, {kind}, reuse=spec)"
                    f"  # @leaf:{leaf.name}")

    def emit(node):
        if isinstance(node, str):
            return node
        args = ", ".join(emit(c) for c in node.children)
        body.append(f"{node.name} = tlx.reuse_group({args}, group_type=tlx.reuse_group_type.{node.kind}, "
                    f"group_size={node.group_size})  # @group:{node.name}")
        return node.name
    if case.tree is not None:
        root = emit(case.tree)
        if case.overlap:
            body.append(f"spec.set_buffer_overlap({root})  # @overlap")
    for leaf in case.leaves:
        body += uses(leaf.name, leaf.shape, leaf.dtype, leaf.num, case.storage, case.ring)
    return module(body, f"test/fuzz/fuzz_trees.py, case {case.seed}")


# ---------------------------------------------------------------------------------------------- judging

def classify(message: str) -> str:
    """The oracle's error class of a TlxAliasError message."""
    if "cannot prove" in message:
        return "cannot-prove"
    if "cannot be split into groups" in message:
        return "not-divisible"
    if "too small" in message or "not enough space" in message:
        return "too-small"
    if "over capacity" in message or "the SM has" in message or "the target allows" in message:
        return "over-capacity"
    if "must be a multiple of the original buffer size" in message:
        return "not-multiple"
    if "violation" in message:
        return "overlap"
    return "other: " + message[:120]


def judge(src: str, exp: Expect, o: kernel_runner.Outcome, arch: int) -> list:
    """[(failure class, detail)]; empty when the outcome is what the oracle expects."""
    out = []
    if o.left:
        out.append(("file left behind", ", ".join(o.left)))
    if o.status in ("killed", "hung", "no-result"):
        return out + [("crash", f"{o.status} {o.error} {o.stderr[-600:]}")]
    if o.status == "exception":
        return out + [("crash", f"{o.error.get('type')}: {o.error.get('message', '')[-300:]}\n"
                                f"{o.error.get('traceback', '')[-1500:]}")]
    lines = {m: kernel_runner.line_of(src, m) for m in exp.lines | exp.warnings}
    file_line = lambda m: f"{o.path}:{lines[m]}"  # noqa: E731
    if o.status == "tlx-error":
        got = classify(o.error["message"])
        if got == "cannot-prove" and exp.verdict == "ok":
            return out + [("cannot prove", o.error["message"][:600])]
        if got == "over-capacity" and exp.verdict == "ok" and exp.near_capacity:
            return out          # the spec fits, the whole kernel with Triton's scratch does not: both answers fine
        if got != exp.verdict:
            return out + [("wrong verdict", f"expected {exp.verdict}, got: {o.error['message'][:600]}")]
        srcs = {file_line(m) for m in exp.lines}
        if o.error.get("src") not in srcs:
            out.append(("unclear error", f"names {o.error.get('src')}, expected one of {sorted(srcs)}: "
                                         f"{o.error['message'][:300]}"))
        return out
    if exp.verdict != "ok":
        return out + [("wrong verdict", f"expected {exp.verdict} at {sorted(exp.lines)}, but it compiled")]
    got = {name: addrs for name, addrs in o.views.items()}
    if got != exp.addresses:
        diff = {n: (exp.addresses.get(n), got.get(n)) for n in set(got) | set(exp.addresses)
                if exp.addresses.get(n) != got.get(n)}
        out.append(("wrong offset", f"leaf: (expected, lowered) {diff}"))
    if [u for _, u in o.backings] != [exp.total]:
        out.append(("wrong offset", f"backing {o.backings}, expected {exp.total} units"))
    want = {file_line(m) for m in exp.warnings}
    have = {where for _, where in o.warnings}
    if want != have:
        out.append(("missing warning", f"expected warnings at {sorted(want)}, got {o.warnings}"))
    return out


def check(seed: int, index: int):
    """(case, source, oracle, outcome, failures) of case `index` of `seed`."""
    case = draw_case(seed, index)
    src = source(case)
    exp = expect(case)
    o = kernel_runner.run(src, {"x_ptr": "*fp32"}, case.arch, name=f"tree_{seed}_{index}")
    return case, src, exp, o, judge(src, exp, o, case.arch)


# ---------------------------------------------------------------------------------------------- long run

def fuzz(seed: int, cases: int | None, minutes: float | None, save: str | None, log=print) -> dict:
    stats = {"cases": 0, "verdicts": collections.Counter(), "failures": collections.Counter(), "examples": {}}
    end = time.monotonic() + minutes * 60 if minutes else None
    t0 = time.monotonic()
    index = 0
    while (cases is None or index < cases) and (end is None or time.monotonic() < end):
        case, src, exp, o, found = check(seed, index)
        stats["cases"] += 1
        stats["verdicts"][exp.verdict if o.status in ("ok", "tlx-error") else o.status] += 1
        for cls, detail in found:
            stats["failures"][cls] += 1
            stats["examples"].setdefault(cls, (f"--seed {seed} --case {index}", detail))
        if found and save:
            os.makedirs(save, exist_ok=True)
            with open(os.path.join(save, f"tree_{seed}_{index}.py"), "w") as f:
                f.write(src)
        if found:
            log(f"case {index}: {[c for c, _ in found]}")
        index += 1
    stats["seconds"] = time.monotonic() - t0
    return stats


def table(stats: dict, title: str = "random reuse trees") -> str:
    n, s = stats["cases"], stats["seconds"]
    rows = [("cases", f"{n}"), ("seconds", f"{s:.0f}"), ("cases per second", f"{n / s:.2f}")]
    rows += [(f"oracle verdict {k}", f"{v}") for k, v in sorted(stats["verdicts"].items())]
    rows += [(f"failure: {k}", f"{v}") for k, v in sorted(stats["failures"].items())] or [("failures", "0")]
    width = max(len(r[0]) for r in rows)
    return "\n".join([f"| {title:<{width}} | count |", f"|{'-' * (width + 2)}|-------|"] +
                     [f"| {a:<{width}} | {b} |" for a, b in rows])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, help="default: random")
    ap.add_argument("--cases", type=int, help="number of cases (default: until --minutes)")
    ap.add_argument("--minutes", type=float, help="time budget (default 1 without --cases)")
    ap.add_argument("--case", type=int, help="run only this case index")
    ap.add_argument("--show", action="store_true", help="with --case: print the source, the oracle, the outcome")
    ap.add_argument("--save", metavar="DIR", help="write the source of every failing case there")
    args = ap.parse_args(argv)
    seed = random.SystemRandom().randrange(2 ** 32) if args.seed is None else args.seed
    kernel_runner.prepare()
    if args.case is not None:
        case, src, exp, o, found = check(seed, args.case)
        if args.show:
            print(src)
            print("oracle:", exp)
            print("outcome:", json.dumps(o.__dict__, indent=1, default=str)[:4000])
        print("failures:", found or "none")
        return 1 if found else 0
    minutes = args.minutes if args.minutes is not None else (None if args.cases else 1.0)
    print(f"fuzzing reuse trees, --seed {seed}, " + (f"{args.cases} cases" if args.cases else f"{minutes:g} min"),
          flush=True)
    stats = fuzz(seed, args.cases, minutes, args.save, log=lambda m: print(m, flush=True))
    print(table(stats))
    for cls, (where, detail) in sorted(stats["examples"].items()):
        print(f"\nfirst {cls}: {where}\n  {detail[:1500]}")
    return 1 if stats["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
