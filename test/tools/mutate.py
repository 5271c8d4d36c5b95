"""Mutation harness: write one lowering bug at a time into the lowered IR of a real kernel, count what
the verifier catches.

    python test/tools/mutate.py [KERNEL...] [--ops OP,...] [-v] [--dump DIR]
    python test/tools/mutate.py --corpus [CASE...] [--ops OP,...] [-v] [--dump DIR]
    python test/tools/mutate.py --corpus --ttgir DIR [FILE...] [--ops OP,...] [-v] [--dump DIR]

`--corpus` mutates the clean hand-aliased kernels instead (test/corpus: ring counters, toggles, partitions,
borrows, slices; and the `_ok` kernels of the lit suite), with the operators and the concrete-run oracle of
`hand_mutate.py`; with `--ttgir DIR`, the `.ttgir` files under DIR instead (e.g. the dumps of
`benchmarks/upstream_tutorials.py --keep DIR`), named by their path under DIR; a file the oracle cannot
read, or that the verifier or the oracle finds unsafe as it is (upstream's STEALB kernel), is listed as
NOT MUTATED.

Input: the Contract-2 ttgir of a kernel compiled on the CPU through the plugin (`KERNELS`). A mutant is
one corruption of the layout, applied consistently, so it models a bug of the lowering rather than a
typo: moving a view changes its `tlx.view` AND every index rewrite of the view, so the code really
addresses the new place. Operators, one function each in `OPERATORS`:

  view-level (tlx.view and every use of one view):
    shift_offset       the view one slot higher / lower
    shrink_stride      the per-group stride one slot smaller
    swap_group_type    a reuse group laid out as if it were the other kind (tree kept: the lowering
                       misread the kind): a distinct sibling on its first sibling, a shared one after
                       the previous one
    flip_tree_kind     the kind flipped in `tlx.overlap` only (code unchanged)
    shrink_allocation  the SMEM backing allocation one row short
  use-level (one `ttg.memdesc_index`, tlx.view kept):
    drop_mod           the `% K` digit left out of the rewrite
    index_plus_one     the rewrite applied to `i + 1`
    scale_index        the stride constant of the rewrite one slot smaller
    other_view_index   the rewrite of another view of the same allocation
    swap_constant      a constant index: the slot of the view's next buffer (as a folded constant)

Oracle (`oracle`), independent of the verifier (no Z3, no shared code: its own line parser of the
ttgir): the specification is the UNMUTATED kernel (its reuse tree, buffer counts, group sizes, slot
sizes: what the user declared and the correct lowering produced); the implementation is what the
MUTATED IR computes. For every use of every TLX view it evaluates the index ops the IR really contains
for every logical buffer index the use can select (all of [0, num) for a runtime index, the one buffer a
constant selects), giving each logical buffer (view, i) its set of slots. The mutant is unsafe
("should be caught") if a buffer is addressed at two different slots by different uses (writer and
reader disagree), a slot lies outside the view's slots or the allocation, or two buffers that may be
live together overlap: (v, i) and (v, j) for i != j; different views in different stages (i floordiv
K_v != j floordiv K_w, K = product of the group sizes on the view's path in the tree); different views
of one stage whose lowest common reuse group is `distinct`. Otherwise the mutant is equivalent (the
memory it touches is still safe); the verifier flagging one is counted apart ("flagged").

Verdicts: caught (unsafe, the verifier reports a violation), stopped (unsafe, no violation, but a "cannot
prove" that stops the compile under the default TLX_ALIAS_PROOF=error: caught at the default policy, without
a counterexample), missed (unsafe, neither), equivalent, flagged (equivalent, yet a violation: e.g. the IR's
own tree contradicts its layout), rejected (Triton refuses the mutant itself: a slice out of its source, or on 3.8+ a view larger than its
source), invalid (Triton cannot parse the mutant: a harness bug, expected 0), unjudged (the oracle does not
model something in the mutant). An equivalent mutant with a blocking "cannot prove" is counted apart
(`Outcome.blocking`): the default policy would stop a safe compile.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace

from tlx_alias._mlir import attr_text, attr_value
from tlx_alias.layout import ViewLayout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hand_mutate  # noqa: E402

NAME = r"%[\w$.-]+(?:#\d+)?"
_INDEX = re.compile(rf"ttg\.memdesc_index ({NAME})\[({NAME})\]")
_CONST = re.compile(r"arith\.constant (?:\{[^}]*\} )?(-?\d+) : i(?:32|64)")
_BIN = re.compile(rf"arith\.(\w+) ({NAME}), ({NAME})")
_MEMDESC = re.compile(r"!ttg\.memdesc<((?:\d+x)+)(\w+)")
_BYTES = {"i8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8}
TAG = '{tlx.index_rewrite = ""}'


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


OPS = {"addi": lambda a, b: a + b, "subi": lambda a, b: a - b, "muli": lambda a, b: a * b,
       "divsi": _trunc_div, "remsi": lambda a, b: a - b * _trunc_div(a, b),
       "floordivsi": lambda a, b: a // b}


class Unsupported(Exception):
    """The IR has an index op the oracle does not evaluate."""


# ---------------------------------------------------------------------------------------------- parsing

@dataclass
class Backing:
    line: int
    var: str
    space: str                 # "smem" | "tmem"
    dims: list
    elem: str

    @property
    def size(self) -> int:     # bytes, or 32-bit columns (of 128 lanes)
        return math.prod(self.dims) * _BYTES[self.elem] // (128 * 4 if self.space == "tmem" else 1)


@dataclass
class View:
    line: int
    alloc: str                 # tlx.alloc
    name: str
    backing: str               # SSA name of the backing allocation
    view_text: str             # the tlx.view dictionary as written
    layout: ViewLayout
    dim0: int                  # slots of the view's type
    tree_text: str | None      # tlx.overlap as written (escaped)


@dataclass
class Site:
    line: int
    view: str                  # alloc id
    index: str                 # the index operand
    expr: tuple                # ("leaf", tok) | ("leafconst", v, tok) | ("const", v) | (op, a, b)
    col: int = 0               # a view whose buffers are windows of its slots: the column its subslice selects
    col_line: int | None = None   # ... and the line of that `ttng.tmem_subslice`

    @property
    def leaf(self):
        """The user's index under the rewrite (a runtime value or an untagged constant), or None (folded)."""
        found = _leaves(self.expr)
        return found[0][-1] if found else None


def _leaves(e):
    if e[0] in ("leaf", "leafconst"):
        return [e]
    if e[0] == "const":
        return []
    return _leaves(e[1]) + _leaves(e[2])


def evaluate(e, i: int) -> int:
    """The index the IR computes when the user's index is i."""
    if e[0] == "leaf":
        return i
    if e[0] in ("const", "leafconst"):
        return e[1]
    return OPS[e[0]](evaluate(e[1], i), evaluate(e[2], i))


class Lowered:
    """Backings, TLX views and their uses (`ttg.memdesc_index`, through warp_specialize captures and loop
    arguments) of one lowered kernel, read line by line from Triton's ttgir."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines()
        self.backings, self.views, self._by_line = {}, {}, {}
        windows, self.windows = {}, []   # (line, backing, the row after the window)
        for n, line in enumerate(self.lines):
            m = re.match(rf"\s*({NAME}) = (ttg\.local_alloc|ttng\.tmem_alloc) .*tlx\.backing", line)
            if m:
                dims, elem = _MEMDESC.search(line.split("->")[-1]).groups()
                self.backings[m.group(1)] = Backing(n, m.group(1), "tmem" if "tmem" in m.group(2) else "smem",
                                                    [int(d) for d in dims.rstrip("x").split("x")], elem)
            m = re.match(rf"\s*({NAME}) = ttg\.memdesc_subslice ({NAME})\[(\d+)", line)
            if m:   # a row window of a backing (Triton 3.9): the view on it starts at its tlx.view's base
                windows[m.group(1)] = m.group(2)
                rows = int(_MEMDESC.search(line.split(" -> ")[-1]).group(1).split("x")[0])
                self.windows.append((n, m.group(2), int(m.group(3)) + rows))
            m = re.match(rf"\s*{NAME} = ttg\.memdesc_reinterpret ({NAME}) ", line)
            view_text = _VIEW_ATTR.search(line) if m else None
            if view_text:
                view_text = view_text.group(1)
                dim0 = int(_MEMDESC.search(line.split(" -> ")[-1]).group(1).split("x")[0])
                v = View(n, _attr(line, "tlx.alloc"), _attr(line, "tlx.name") or _attr(line, "tlx.alloc"),
                         windows.get(m.group(1), m.group(1)), view_text, ViewLayout.from_fields(attr_value(view_text)), dim0,
                         _attr(line, "tlx.overlap"))
                self.views[v.alloc] = self._by_line[n] = v
        self.sites = []
        for n, line in enumerate(self.lines):
            m = _INDEX.search(line)
            v = m and self.view_of(m.group(1), n)
            if v:
                site = Site(n, v.alloc, m.group(2), self.expr(m.group(2), n))
                if v.layout.width:
                    site.col_line, site.col = self._window_column(n)
                self.sites.append(site)

    def _window_column(self, n):
        """(line, column) of the `ttng.tmem_subslice` of the slot the `memdesc_index` at line n selects (the
        lowering emits it right after the index)."""
        res = re.match(rf"\s*({NAME}) = ", self.lines[n]).group(1)
        for k in range(n + 1, min(n + 4, len(self.lines))):
            m = re.search(rf"= ttng\.tmem_subslice {re.escape(res)} \{{offset = (\d+) : i32\}}", self.lines[k])
            if m:
                return k, int(m.group(1))
        raise Unsupported(f"no tmem_subslice of the window view's slot after line {n + 1}")

    # -- SSA names: the nearest definition above a line is the one in scope (MLIR's printer reuses a name
    #    only once the previous one is out of scope)
    def define(self, tok, before):
        base = tok.split("#")[0]
        esc = re.escape(base)
        for n in range(before - 1, -1, -1):
            line = self.lines[n]
            s = line.lstrip()
            if re.match(rf"{esc}(?::\d+)?\s*=\s", s):
                return n, "result"
            if base + ":" in line or base + " = " in line:
                if re.match(r"partition\d+\(", s) and re.search(rf"{esc}:", line):
                    return n, "partition"
                if re.search(rf"iter_args\(.*{esc} = ", line):
                    return n, "iter"
                if re.search(rf"(?<![\w$.-]){esc}(?::| = )", line):
                    return n, "arg"
        return None

    def view_of(self, tok, before, depth=0):
        """The TLX view a descriptor value is (through warp_specialize captures and loop init values)."""
        d = self.define(tok, before)
        if d is None or depth > 8:
            return None
        n, kind = d
        line = self.lines[n]
        if kind == "result":
            return self._by_line.get(n)
        if kind == "partition":
            pos = re.findall(rf"({NAME}):", line).index(tok.split("#")[0])
            ws = max(k for k in range(n) if "ttg.warp_specialize(" in self.lines[k])
            captured = re.findall(NAME, self.lines[ws].split("ttg.warp_specialize(", 1)[1].split(")", 1)[0])
            return self.view_of(captured[pos], ws, depth + 1)
        if kind == "iter":
            init = re.search(rf"{re.escape(tok)} = ({NAME})", line).group(1)
            return self.view_of(init, n, depth + 1)
        return None

    def expr(self, tok, before):
        """The index expression: ops tagged `tlx.index_rewrite` down to the user's index (the leaf)."""
        d = self.define(tok, before)
        if d and d[1] == "result":
            line = self.lines[d[0]]
            const = _CONST.search(line) if "arith.constant" in line else None
            if "tlx.index_rewrite" in line:
                if const:
                    return ("const", int(const.group(1)))
                m = _BIN.search(line)
                if not m or m.group(1) not in OPS:
                    raise Unsupported(line.strip())
                return (m.group(1), self.expr(m.group(2), d[0]), self.expr(m.group(3), d[0]))
            if const:
                return ("leafconst", int(const.group(1)), tok)
        return ("leaf", tok)

    # -- the specification side (used on the unmutated kernel)
    def domain(self, site) -> list:
        """Logical buffers a use can select: all for a runtime index, one for a constant."""
        v, leaves = self.views[site.view], _leaves(site.expr)
        if any(e[0] == "leaf" for e in leaves):
            return list(range(v.layout.num))
        if leaves:
            return [leaves[0][1]]
        slot = evaluate(site.expr, 0)
        return [i for i in range(v.layout.num) if v.layout.slot_of(i) == slot]

    def tree(self, backing):
        texts = [v.tree_text for v in self.views.values() if v.backing == backing and v.tree_text]
        return json.loads(texts[0].replace("\\22", '"')) if texts else None

    def paths(self, backing) -> dict:
        """alloc id -> [(child index, kind, group_size) of each group above it, root first]."""
        out = {}

        def walk(node, trail):
            if isinstance(node, str):
                out[node] = trail
                return
            for k, child in enumerate(node.get("children", [])):
                walk(child, trail + [(k, node.get("kind", "shared"), node.get("group_size", 1))])
        tree = self.tree(backing)
        if tree is not None:
            walk(tree, [])
        return out

    def must_be_disjoint(self, a, i, b, j, paths) -> bool:
        """May buffer i of view a and buffer j of view b be live at once (so they must not overlap)?"""
        if a == b:
            return i != j
        pa, pb = paths.get(a), paths.get(b)
        ka = math.prod(g for _, _, g in pa) if pa else 1
        kb = math.prod(g for _, _, g in pb) if pb else 1
        if i // ka != j // kb:
            return True
        if pa is None or pb is None:
            return False            # no tree: views in lock step share a stage
        for (ca, kind, _), (cb, _, _) in zip(pa, pb):
            if ca != cb:
                return kind == "distinct"
        return False


def _attr(line, key):
    m = re.search(rf'{re.escape(key)} = "((?:[^"\\]|\\.)*)"', line)
    return m.group(1) if m else None


_VIEW_ATTR = re.compile(r"\btlx\.view = (\{[^{}]*\})")


# ---------------------------------------------------------------------------------------------- oracle

def oracle(spec: Lowered, impl: Lowered) -> list:
    """Why the mutated IR `impl` is unsafe for the kernel `spec` declares (empty: safe). See module doc."""
    if len(spec.sites) != len(impl.sites):
        raise Unsupported("the mutant changed the number of uses")
    foot = {}   # (view, user's index) -> {(slot, column of the buffer in it)} over the uses
    for s0, s1 in zip(spec.sites, impl.sites):
        for i in spec.domain(s0):
            foot.setdefault((s0.view, i), set()).add((evaluate(s1.expr, i), s1.col))
    problems = []
    for (a, i), slots in sorted(foot.items()):
        v, unit, width = impl.views[a], spec.views[a].layout.slot, spec.views[a].layout.buffer[1]
        size = impl.backings[v.backing].size
        if len(slots) > 1:
            problems.append(f"{v.name}[{i}] addressed at slots {sorted(slots)} by different uses")
        for s, col in sorted(slots):
            if not 0 <= s < v.dim0 or v.layout.base + s * unit + col + width > size or col + width > unit:
                problems.append(f"{v.name}[{i}] at slot {s}: outside the view's {v.dim0} slots or the {size}-unit "
                                "allocation")
    cells = sorted((a, i, s) for (a, i), slots in foot.items() for s in slots)
    paths = {b: spec.paths(b) for b in spec.backings}
    for x, (a, i, s) in enumerate(cells):
        for b, j, t in cells[x + 1:]:
            back = spec.views[a].backing
            if (a, i) == (b, j) or spec.views[b].backing != back:
                continue
            if not spec.must_be_disjoint(a, i, b, j, paths[back]):
                continue
            la, lb = spec.views[a].layout, spec.views[b].layout
            sa, sb = la.base + s[0] * la.slot + s[1], lb.base + t[0] * lb.slot + t[1]   # units
            ua, ub = la.buffer[1], lb.buffer[1]
            if sa < sb + ub and sb < sa + ua:
                problems.append(f"{spec.views[a].name}[{i}] [{sa}, {sa + ua}) overlaps "
                                f"{spec.views[b].name}[{j}] [{sb}, {sb + ub})")
    return problems


# ---------------------------------------------------------------------------------------------- editing


class _TextOps:
    """`ViewLayout.slot_of`'s arithmetic as arith ops of custom-form text: `const(v)` and `bin_(kind, a, b)`
    emit an op and return its SSA name (nothing folded, as a mutant should read)."""

    def __init__(self, const, bin_):
        self.const, self.bin_ = const, bin_

    def add(self, a, b):
        return self.bin_("addi", a, b)

    def mul(self, a, b):
        return self.bin_("muli", a, b)

    def div(self, a, b):
        return self.bin_("divsi", a, b)

    def rem(self, a, b):
        return self.bin_("remsi", a, b)

class Edit:
    """Line replacements and insertions over a kernel's ttgir; `text()` applies them."""

    def __init__(self, low: Lowered):
        self.low, self.lines, self.before, self.n = low, {}, {}, 0

    def line(self, n):
        return self.lines.get(n, self.low.lines[n])

    def set(self, n, text):
        self.lines[n] = text

    def text(self) -> str:
        out = []
        for n, line in enumerate(self.low.lines):
            out += self.before.get(n, [])
            out.append(self.lines.get(n, line))
        return "\n".join(out) + "\n"

    def rewrite(self, site: Site, layout: ViewLayout, plus=0, logical=None):
        """Replace the index of one use by `layout`'s rewrite of the user's index (+ plus), emitted as the
        lowering does (arith ops tagged tlx.index_rewrite); a use without a user index (folded by the
        lowering), or any use when `logical` is given, gets the constant slot of that buffer."""
        indent = re.match(r"\s*", self.low.lines[site.line]).group(0)
        out = []

        def op(body):
            self.n += 1
            name = f"%mut{self.n}"
            out.append(f"{indent}{name} = {body}")
            return name

        def const(v):
            return op(f"arith.constant {TAG} {v} : i32")

        def bin_(kind, a, b):
            return op(f"arith.{kind} {a}, {b} {TAG} : i32")
        x = site.leaf
        if x is None or logical is not None:
            # a folded constant: the lowering records the user's index beside the slot it computed
            user = self.low.domain(site)[0]
            slot = layout.slot_of(user if logical is None else logical)
            t = op(f'arith.constant {{tlx.index_rewrite = "", tlx.logical_index = {user} : i64}} {slot} : i32')
        else:
            x = bin_("addi", x, const(plus)) if plus else x
            t = layout.slot_of(x, _TextOps(const, bin_))   # the lowering's formula, as custom-form text
        self.before.setdefault(site.line, []).extend(out)
        self.set(site.line, self.line(site.line).replace(f"[{site.index}]", f"[{t}]", 1))
        if site.col_line is not None:   # a window of its slot: the buffer's column in the slot, as laid out
            self.set(site.col_line, self.line(site.col_line).replace(
                f"{{offset = {site.col} : i32}}", f"{{offset = {layout.buffer[0]} : i32}}", 1))
        return self


def relayout(low: Lowered, changes: dict) -> Edit:
    """Views moved consistently: the new tlx.view and every use rewritten for it (alloc id -> ViewLayout)."""
    e = Edit(low)
    for a, lay in changes.items():
        v = low.views[a]
        e.set(v.line, e.line(v.line).replace(f"tlx.view = {v.view_text}", f"tlx.view = {attr_text(lay.fields())}", 1))
        for s in low.sites:
            if s.view == a:
                e.rewrite(s, lay)
    return e


def _uses(low, site):
    return f"{low.views[site.view].name} use at line {site.line + 1}"


# ---------------------------------------------------------------------------------------------- operators

def shift_offset(low):
    """The lowering placed a view one slot higher (lower): it may run into a neighbour, another stage or
    past the end of the allocation (or into free space: equivalent)."""
    for v in low.views.values():
        for d in (1, -1):   # one buffer: a slot, or the buffer's width in its slot
            lay = replace(v.layout, offset=v.layout.offset + d * v.layout.buffer[1])
            if lay.width and lay.buffer[0] + lay.width > lay.slot:
                continue     # out of its slot's window: not a layout this form can express
            yield f"{v.name} offset {v.layout.offset} -> {lay.offset}", relayout(low, {v.alloc: lay})


def shrink_stride(low):
    """The lowering computed a per-group stride one slot too small: stage g+1 of the view starts inside
    stage g of the others (unused when the view has a single group: equivalent)."""
    for v in low.views.values():
        if v.layout.stride > v.layout.slot:
            lay = replace(v.layout, stride=v.layout.stride - v.layout.slot)
            yield f"{v.name} stride {v.layout.stride} -> {lay.stride}", relayout(low, {v.alloc: lay})


def _groups(node, path=()):
    if isinstance(node, dict):
        yield path, node
        for k, child in enumerate(node.get("children", [])):
            yield from _groups(child, path + (k,))


def _leaf_ids(node):
    return [node] if isinstance(node, str) else [x for c in node.get("children", []) for x in _leaf_ids(c)]


def swap_group_type(low):
    """The lowering laid out a reuse group as the other kind while the tree says otherwise: a `distinct`
    sibling placed at its first sibling's offset (they overlap while both live), or a `shared` sibling
    placed after the previous one (the stride no longer covers a stage)."""
    for back in low.backings:
        tree, paths = low.tree(back), low.paths(back)
        if tree is None:
            continue

        def span(node):
            lo, hi = [], []
            for a in _leaf_ids(node):
                lay = low.views[a].layout
                k = math.prod(g for _, _, g in paths[a])
                starts = [lay.address(i) for i in range(min(k, lay.num))]
                lo.append(min(starts))
                hi.append(max(starts) + lay.buffer[1])
            return min(lo), max(hi)
        for path, node in _groups(tree):
            kids = node.get("children", [])
            for k in range(1, len(kids)):
                if node["kind"] == "distinct":
                    delta = span(kids[0])[0] - span(kids[k])[0]
                else:
                    delta = span(kids[k - 1])[1] - span(kids[k])[0]
                moved = _leaf_ids(kids[k])
                if delta == 0 or any(delta % low.views[a].layout.buffer[1] for a in moved) or any(
                        (lay := replace(low.views[a].layout, offset=low.views[a].layout.offset + delta)).width
                        and lay.buffer[0] + lay.width > lay.slot for a in moved):
                    continue
                names = ",".join(low.views[a].name for a in moved)
                yield (f"{node['kind']} group {node.get('src', '').rsplit('/', 1)[-1]}: {names} moved by {delta}",
                       relayout(low, {a: replace(low.views[a].layout, offset=low.views[a].layout.offset + delta)
                                      for a in moved}))


def flip_tree_kind(low):
    """The reuse tree in `tlx.overlap` says the other kind, the layout and code unchanged: equivalent by
    construction (same memory accesses); a verifier may still reject the IR for contradicting itself."""
    for back in low.backings:
        tree = low.tree(back)
        views = [v for v in low.views.values() if v.backing == back and v.tree_text]
        if tree is None or _escape(tree) != views[0].tree_text:
            continue
        for path, node in _groups(tree):
            flipped = json.loads(json.dumps(tree))
            target = flipped
            for k in path:
                target = target["children"][k]
            target["kind"] = "shared" if target["kind"] == "distinct" else "distinct"
            e = Edit(low)
            for v in views:
                e.set(v.line, e.line(v.line).replace(v.tree_text, _escape(flipped), 1))
            yield f"{node['kind']} group {node.get('src', '').rsplit('/', 1)[-1]} -> {target['kind']}", e


def _escape(tree):
    return json.dumps(tree, separators=(",", ":")).replace('"', "\\22")


def shrink_allocation(low):
    """The lowering sized the SMEM backing allocation one row (of bytes) short: the last slots of a view now
    lie past its end (or nothing used them: equivalent). Not TMEM: Triton rejects a tmem_alloc whose shape
    is not its encoding's power-of-two block, so that bug cannot reach the verifier."""
    for b in low.backings.values():
        if b.space == "tmem":
            continue
        if b.dims[0] == 1:  # [1, P]: no row of P bytes to drop
            continue
        dims = [b.dims[0] - 1] + b.dims[1:]
        if any(back == b.var and end > dims[0] for _, back, end in low.windows):
            continue   # a row window past the new end: Triton's subslice verifier rejects it first
        old, new = "x".join(map(str, b.dims)) + "x" + b.elem, "x".join(map(str, dims)) + "x" + b.elem
        shape, new_shape = "x".join(map(str, b.dims)), "x".join(map(str, dims))
        e = Edit(low)
        # the backing's type, and the allocation shape a window's type carries (on the window and on the
        # reinterpret of it), wherever a line mentions them
        lines = [b.line] + [v.line for v in low.views.values() if v.backing == b.var]
        lines += [n for n, back, _ in low.windows if back == b.var]
        for n in lines:
            e.set(n, e.line(n).replace(f"<{old},", f"<{new},").replace(f", {shape}>", f", {new_shape}>"))
        yield f"{b.var} {old} -> {new}", e


def drop_mod(low):
    """One use's rewrite lost its `% K` digit: every buffer of a group selects the group's first slot."""
    for s in low.sites:
        lay = low.views[s.view].layout
        if lay.radices:
            yield _uses(low, s), Edit(low).rewrite(s, replace(lay, radices=(), strides=()))


def index_plus_one(low):
    """One use's rewrite applied to `i + 1` (an off-by-one in the lowering): the last buffer selects a slot
    past the view's, the others their neighbour's."""
    for s in low.sites:
        if s.leaf is not None:
            yield _uses(low, s), Edit(low).rewrite(s, low.views[s.view].layout, plus=1)


def scale_index(low):
    """One use's rewrite with the stride constant one slot smaller (the scale of `i floordiv K`): that use
    disagrees with the others on every group but the first."""
    for s in low.sites:
        lay = low.views[s.view].layout
        if lay.stride > lay.slot:
            yield _uses(low, s), Edit(low).rewrite(s, replace(lay, stride=lay.stride - lay.slot))


def other_view_index(low):
    """One use computes its index with the rewrite of the next view of the same allocation (the lowering
    picked the wrong view's layout): equivalent only where the two rewrites agree."""
    for s in low.sites:
        v = low.views[s.view]
        others = [w for w in low.views.values() if w.backing == v.backing and w.alloc != v.alloc]
        if others:
            w = next((w for w in others if w.line > v.line), others[0])
            yield f"{_uses(low, s)} with {w.name}'s rewrite", Edit(low).rewrite(s, w.layout)


def swap_constant(low):
    """A constant index (the lowering folds `view.index(c)`) folded to the slot of the view's next buffer
    c+1 mod num: the use now touches a buffer the program did not ask for."""
    for s in low.sites:
        lay = low.views[s.view].layout
        if not any(e[0] == "leaf" for e in _leaves(s.expr)) and lay.num > 1:
            c = low.domain(s)[0]
            yield (f"{_uses(low, s)}: buffer {c} -> slot of buffer {(c + 1) % lay.num}",
                   Edit(low).rewrite(s, lay, logical=(c + 1) % lay.num))


OPERATORS = {
    "shift_offset": shift_offset,
    "shrink_stride": shrink_stride,
    "swap_group_type": swap_group_type,
    "flip_tree_kind": flip_tree_kind,
    "shrink_allocation": shrink_allocation,
    "drop_mod": drop_mod,
    "index_plus_one": index_plus_one,
    "scale_index": scale_index,
    "other_view_index": other_view_index,
    "swap_constant": swap_constant,
}


# ---------------------------------------------------------------------------------------------- harness

@dataclass
class Outcome:
    op: str
    target: str
    verdict: str                  # caught | stopped | missed | equivalent | flagged | rejected | invalid | unjudged
    problems: list = field(default_factory=list)      # the oracle's
    found: list = field(default_factory=list)         # the verifier's violations
    unknowns: int = 0
    text: str = ""
    blocking: int = 0             # "cannot prove" verdicts that stop the compile by default (all but P6, P7)
    stops: list = field(default_factory=list)         # their texts


def classify(op, target, problems, report, text) -> Outcome:
    """The verdict on one mutant from the oracle's problems and the verifier's report (module doc)."""
    found = [f"{v.prop} {v.alloc}: {v.detail}" for v in report.violations]
    blocking = len(report.blocking)
    if problems:
        verdict = "caught" if found else ("stopped" if blocking else "missed")
    else:
        verdict = "flagged" if found else "equivalent"
    stops = [f"{v.prop} {v.alloc}: cannot prove: {v.detail}" for v in report.blocking]
    return Outcome(op, target, verdict, problems, found, len(report.unknowns), text, blocking, stops)


def prove_text(text, path="mutant.ttgir"):
    """The verifier's report on ttgir text (the path a Triton cache dump takes)."""
    from tlx_alias.verify import prove_module
    from tlx_alias.verify.source import load_triton
    loaded = load_triton(text, path)
    with loaded.context:
        return prove_module(loaded.module, None, loaded.aliases, path)


def mutants(ttgir: str, ops=None):
    """(operator, target, mutated text) for every mutant of a kernel."""
    low = Lowered(ttgir)
    for name in ops or OPERATORS:
        for target, edit in OPERATORS[name](low):
            yield name, target, edit.text()


# Triton's own checks when it reads a mutant back: a view larger than its source (3.8+), a slice out of its shape
_TRITON_SIZE_CHECKS = ("exceeds the source view", "same logical storage size", "split offset may not exceed",
                       "non zero offset found in a dimension", "split offset must be 32-bit aligned")


def _unreadable(op, target, text, exc) -> Outcome:
    """A mutant the verifier could not read: Triton 3.8+ checks a view's size against its source itself
    ("rejected": such a mutant never reaches a user's dump), anything else is a broken mutant ("invalid")."""
    verdict = "rejected" if any(m in str(exc) for m in _TRITON_SIZE_CHECKS) else "invalid"
    return Outcome(op, target, verdict, [str(exc).splitlines()[0]], text=text)


def run(ttgir: str, ops=None) -> list:
    """Outcome of every mutant of a kernel (see the module doc for the classification)."""
    from tlx_alias.verify.source import InputError
    spec = Lowered(ttgir)
    out = []
    for op, target, text in mutants(ttgir, ops):
        try:
            report = prove_text(text)
        except InputError as exc:
            out.append(_unreadable(op, target, text, exc))
            continue
        out.append(classify(op, target, oracle(spec, Lowered(text)), report, text))
    return out


def run_hand(ttgir: str, ops=None) -> list:
    """Outcome of every mutant of a hand-aliased kernel (operators and oracle of hand_mutate.py)."""
    from tlx_alias.verify.source import InputError
    out = []
    for op in ops or hand_mutate.OPERATORS:
        for target, text in hand_mutate.OPERATORS[op](ttgir):
            try:
                report = prove_text(text)
            except InputError as exc:
                out.append(_unreadable(op, target, text, exc))
                continue
            try:
                problems = hand_mutate.judge(text)
            except hand_mutate.Unsupported as exc:
                out.append(Outcome(op, target, "unjudged", [str(exc)], text=text))
                continue
            out.append(classify(op, target, problems, report, text))
    return out


def _compile(name):
    from tlx_alias.kernels import blackwell_attention, blackwell_gemm, demo, hopper_attention, hopper_gemm
    from tlx_alias.kernels._common import BLACKWELL, compile_for
    return {
        "fa_tmem_demo": lambda: compile_for(demo.fa_tmem_demo_kernel, {"out_ptr": "*fp32"},
                                            {"BM": 128, "BN": 128, "S": 2, "NUM": 2}, BLACKWELL),
        "hopper_gemm": lambda: hopper_gemm.compile_gemm(),
        "hopper_attention": lambda: hopper_attention.compile_attention(),
        "blackwell_gemm": lambda: blackwell_gemm.compile_matmul(),
        "blackwell_attention": lambda: blackwell_attention.compile_attention(),
    }[name]()


KERNELS = ("fa_tmem_demo", "hopper_gemm", "hopper_attention", "blackwell_gemm", "blackwell_attention")


def lowered_ttgir(name: str) -> str:
    """The kernel's lowered ttgir (compiled on the CPU through the plugin, for its own target)."""
    return _compile(name).ttgir


@dataclass
class Row:
    kernel: str
    base_ok: bool
    outcomes: list
    seconds: float

    def count(self, *verdicts):
        return sum(o.verdict in verdicts for o in self.outcomes)

    @property
    def generated(self):
        return len(self.outcomes)

    @property
    def equivalent(self):
        return self.count("equivalent", "flagged")

    @property
    def caught(self):
        return self.count("caught")

    @property
    def missed(self):
        return self.count("missed")


_TEST = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def corpus_kernels(clean: bool = True) -> dict:
    """{name: () -> ttgir} of the hand-aliased kernels the installed Triton compiles: the cases of
    test/corpus/cases.py and the `_ok` kernels of test/lit/verify/Inputs/make_inputs.py ("lit: " names);
    clean=False: their seeded bugs instead (expected unsafe)."""
    sys.path[:0] = [os.path.join(_TEST, "corpus"), os.path.join(_TEST, "lit", "verify", "Inputs")]
    import cases
    import make_inputs
    out = {n: (lambda n=n: cases.compile_ttgir(n)) for n, c in cases.CASES.items()
           if (c[4] is None) == clean and not cases.rejected_by_this_triton(n)}
    out.update({f"lit: {n}": (lambda n=n: make_inputs.compile_ttgir(n)) for n in sorted(make_inputs.KERNELS)
                if n.endswith("_ok") == clean and not make_inputs.rejected_by_this_triton(n)})
    return out


def measure_hand(name: str, ops=None, ttgir: str | None = None) -> Row:
    """Mutants of one clean hand-aliased kernel; base_ok: the oracle and the verifier both find it safe (the
    verifier: no violation, no "cannot prove" that stops a compile; P6's "the allocations together may not fit",
    a warning, is about capacity, which the operators do not touch)."""
    if ttgir is None:
        ttgir = corpus_kernels()[name]()
    base = prove_text(ttgir, "corpus.ttgir")
    base_ok = not base.violations and not base.blocking and not hand_mutate.judge(ttgir)
    t0 = time.perf_counter()
    outcomes = run_hand(ttgir, ops) if base_ok else []    # mutants of an unsafe kernel say nothing
    return Row(name, base_ok, outcomes, time.perf_counter() - t0)


def measure(name: str, ops=None, ttgir: str | None = None) -> Row:
    ttgir = ttgir if ttgir is not None else lowered_ttgir(name)
    base = prove_text(ttgir, name + ".ttgir")
    spec = Lowered(ttgir)
    base_ok = not base.violations and not oracle(spec, spec)
    t0 = time.perf_counter()
    outcomes = run(ttgir, ops)
    return Row(name, base_ok, outcomes, time.perf_counter() - t0)


def _counts(oc):
    n = lambda *v: sum(o.verdict in v for o in oc)  # noqa: E731
    unsafe = n("caught", "stopped", "missed")
    return (f"{len(oc):7} {unsafe:6} {n('caught'):6} {n('stopped'):7} {n('missed'):6} {n('equivalent', 'flagged'):6} "
            f"{n('flagged'):9} {sum(o.blocking > 0 for o in oc if o.verdict == 'equivalent'):10} "
            f"{n('rejected'):8} {n('invalid', 'unjudged'):7}")


_HEAD = (f"{'mutants':>7} {'unsafe':>6} {'caught':>6} {'stopped':>7} {'missed':>6} {'equiv':>6} {'(flagged)':>9} "
         f"{'(c. prove)':>10} {'rejected':>8} {'inv/unj':>7}")


def table(rows) -> str:
    """One line per kernel: unsafe = caught (violation) + stopped (blocking "cannot prove") + missed;
    equivalent, of which flagged (a violation) and "(c. prove)" (a blocking "cannot prove")."""
    head = f"{'kernel':30} {'base':5} {_HEAD} {'time s':>7} {'ms/mut':>6}"
    out = [head, "-" * len(head)]
    for r in rows:
        out.append(f"{r.kernel[:30]:30} {'ok' if r.base_ok else 'BAD':5} {_counts(r.outcomes)} "
                   f"{r.seconds:7.1f} {1e3 * r.seconds / max(1, r.generated):6.0f}")
    out.append(f"{'all':30} {'':5} {_counts([o for r in rows for o in r.outcomes])}")
    return "\n".join(out)


def by_operator(rows) -> str:
    ops = list(dict.fromkeys(o.op for r in rows for o in r.outcomes))
    head = f"{'operator':18} {_HEAD}"
    out = [head, "-" * len(head)]
    for op in ops:
        out.append(f"{op:18} {_counts([o for r in rows for o in r.outcomes if o.op == op])}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*", metavar="KERNEL", help=f"default: all of {', '.join(KERNELS)} "
                    "(--corpus: the clean hand-aliased kernels, see corpus_kernels)")
    ap.add_argument("--corpus", action="store_true", help="mutate the corpus's hand-aliased kernels (hand_mutate.py)")
    ap.add_argument("--ops", help=f"comma-separated subset of {', '.join(OPERATORS)} "
                    f"(--corpus: of {', '.join(hand_mutate.OPERATORS)})")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also list the equivalent mutants the verifier flags or stops")
    ap.add_argument("--dump", metavar="DIR", help="write each missed mutant's ttgir there")
    ap.add_argument("--ttgir", metavar="DIR", help="with --corpus: mutate the .ttgir files under DIR instead")
    args = ap.parse_args(argv)
    ops = args.ops.split(",") if args.ops else None
    kernels, operators, measure_one = KERNELS, OPERATORS, measure
    if args.ttgir and not args.corpus:
        ap.error("--ttgir needs --corpus (the hand-aliasing operators and their oracle)")
    if args.ttgir:
        files = {os.path.relpath(os.path.join(d, f), args.ttgir): os.path.join(d, f)
                 for d, _, names in os.walk(args.ttgir) for f in names if f.endswith(".ttgir")}

        def measure_one(name, ops):
            with open(files[name]) as f:
                return measure_hand(name, ops, ttgir=f.read())
        kernels, operators = sorted(files), hand_mutate.OPERATORS
    elif args.corpus:
        kernels, operators, measure_one = list(corpus_kernels()), hand_mutate.OPERATORS, measure_hand
    for bad in [k for k in args.kernels if k not in kernels] + [o for o in ops or [] if o not in operators]:
        ap.error(f"unknown kernel or operator {bad!r}")
    rows, unread = [], []
    for name in args.kernels or kernels:
        try:
            rows.append(measure_one(name, ops))
        except Exception as exc:     # --ttgir: IR the oracle's parser does not know; say so, go on
            if not args.ttgir:
                raise
            unread.append(f"(the oracle cannot read it) {name}: {type(exc).__name__}: {exc}")
            continue
        if args.ttgir and not rows[-1].base_ok:   # e.g. upstream's STEALB kernel: a finding, not a harness error
            unread.append(f"(the verifier or the oracle finds it unsafe) {rows.pop().kernel}")
            continue
        print(f"{name}: {rows[-1].generated} mutants in {rows[-1].seconds:.1f} s", file=sys.stderr)
    for line in unread:
        print(f"NOT MUTATED {line}")
    print(table(rows))
    print()
    print(by_operator(rows))
    shown = ("missed", "flagged", "stopped", "invalid", "unjudged") if args.verbose else ("missed", "invalid", "unjudged")
    for r in rows:
        for k, o in enumerate(r.outcomes):
            stopped_equivalent = args.verbose and o.verdict == "equivalent" and o.blocking
            if o.verdict not in shown and not stopped_equivalent:
                continue
            print(f"\n{'EQUIVALENT, STOPPED' if stopped_equivalent else o.verdict.upper()} {r.kernel} {o.op}: {o.target}")
            for p in (o.stops if stopped_equivalent else o.problems if o.verdict != "flagged" else o.found)[:3]:
                print(f"    {p}")
            if o.unknowns:
                print(f"    (the verifier: {o.unknowns} checks it cannot prove, {o.blocking} of them stopping the compile)")
            if args.dump and o.verdict in ("missed", "invalid", "unjudged"):
                os.makedirs(args.dump, exist_ok=True)
                path = os.path.join(args.dump, f"{r.kernel}.{o.op}.{k}.ttgir")
                with open(path, "w") as f:
                    f.write(o.text)
                print(f"    -> {path}")
    return 1 if any(r.missed or r.count("invalid") or not r.base_ok for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
