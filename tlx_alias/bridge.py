"""Triton module <-> upstream MLIR module (`tlx_alias._mlir`), through generic-form text.

Small and isolated on purpose: a Triton API that hands out generic text with locations replaces it.

Out of Triton (`to_upstream`): Triton prints generic form only through its reproducer, without locations
(`tlx_alias._triton.print_generic`). Locations come from the custom printout (`module.str()`), which has
them: both printouts list the operations in the same pre-order, so the i-th custom op's `loc(...)` goes onto
the i-th upstream op (op names cross-checked; ops that custom printers hide, such as implicit `scf.yield`,
take their parent's location). On any mismatch every op gets the kernel's `def` line, a TlxAliasWarning
says so, and `last_stats["locations"]` records why; nothing crashes.

Back into Triton (`to_triton`): generic text with `loc(...)`, with the alias definitions prepended — opaque
types in the upstream bindings keep `#alias` references verbatim, so Triton needs the definitions.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import warnings

from tlx_alias import _triton
from tlx_alias._mlir import ir, new_context
from tlx_alias.errors import TlxAliasWarning

__all__ = ["BridgeError", "to_upstream", "to_triton", "apply_locations", "last_stats"]

last_stats: dict = {}
"""Figures of the latest call: to_upstream_ms, locations_ms, to_triton_ms, ops, locations ("ok" or why not)."""

_ALIAS_DEF = re.compile(r"^([#!][A-Za-z_][\w$.-]*) = (.+)$")
_LOC_DEF = re.compile(r"^#loc\d* = loc\(.*\)$")
_LOC_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[()]')  # a string literal (to its end if unterminated), or a paren
_OP_NAME = re.compile(r'^(?:%[^=]*?=\s*)?(?:"([^"]+)"|([A-Za-z_][\w$.]*))')
_ELIDED = "__elided__"


class BridgeError(RuntimeError):
    """An internal failure of the IR bridge (not a user mistake)."""


# ------------------------------------------------------------------------------------------ out

def to_upstream(triton_module, context=None):
    """Triton module -> (upstream `ir.Module`, aliases). aliases: {"#blocked": "#ttg.blocked<...>", ...} in order."""
    last_stats.clear()
    t0 = time.perf_counter()
    text = _triton.print_generic(triton_module)
    if _ELIDED in text:
        raise BridgeError("Triton's generic printout elided a large constant (dense_resource<__elided__>); "
                          "refusing to hand a truncated module back to Triton")
    aliases = {}
    for line in text.splitlines():
        m = _ALIAS_DEF.match(line)
        if not m:
            break
        aliases[m.group(1)] = m.group(2)
    ctx = context or new_context()
    try:
        module = ir.Module.parse(text, ctx)
    except Exception as exc:
        raise BridgeError(f"upstream bindings could not parse Triton's generic printout: {exc}") from None
    t1 = time.perf_counter()
    status = apply_locations(module, triton_module.str())
    t2 = time.perf_counter()
    last_stats.update(to_upstream_ms=(t1 - t0) * 1e3, locations_ms=(t2 - t1) * 1e3, locations=status,
                      bytes=len(text))
    if status != "ok":
        warnings.warn(TlxAliasWarning(f"tlx-alias lost the kernel's line information ({status}); "
                                      "the kernel compiles, but error messages and profiles show no lines"),
                      stacklevel=2)
    return module, aliases


def apply_locations(module, custom_text: str) -> str:
    """Set the locations found in Triton's custom printout onto `module`'s ops and block arguments.

    Returns "ok", or the reason why every location was set to the fallback instead.
    """
    ops, parents, blocks = _preorder(module.operation)
    last_stats["ops"] = len(ops)
    try:
        loc_defs, custom_ops, arg_groups = _parse_custom(custom_text)
        custom_of = _align([op.name for op in ops], [name for name, _ in custom_ops])
        texts = {loc for _, loc in custom_ops if loc} | {t for group in arg_groups.values() for t in group}
        locs = _build_locations(module.context, loc_defs, texts)
        unknown = ir.Location.unknown(module.context)
        for k, op in enumerate(ops):  # pre-order: a parent's location is set before its children's
            c = custom_of[k]
            if c is not None and custom_ops[c][1] is not None:
                op.location = locs[custom_ops[c][1]]
            elif parents[k] is not None:  # hidden by a custom printer (implicit scf.yield ...): parent's line
                op.location = ops[parents[k]].location
        for args, owner, first in blocks:
            group = arg_groups.get(custom_of[first]) if first is not None else None
            if group is not None and len(group) == len(args):
                for arg, text in zip(args, group):
                    arg.set_location(locs[text])
            else:  # printers that omit block-argument locations (scf.for, scf.while): unknown
                for arg in args:
                    arg.set_location(unknown)
        return "ok"
    except Exception as exc:  # never let line information break a compile; never leave parser positions
        fallback = _fallback_location(module.context, custom_text)
        for op in ops:
            op.location = fallback
        for args, _, _ in blocks:
            for arg in args:
                arg.set_location(fallback)
        return f"{type(exc).__name__}: {exc}"


def _preorder(top):
    """(ops in pre-order, index of each op's parent op, [(block arguments, owner index, first op index)])."""
    ops, parents, blocks = [], [], []

    def visit(op, parent):
        k = len(ops)
        ops.append(op)
        parents.append(parent)
        for region in op.regions:
            for block in region.blocks:
                first = len(ops)
                for inner in block.operations:
                    visit(inner.operation, k)
                args = list(block.arguments)
                if args:
                    blocks.append((args, k, first if len(ops) > first else None))
    visit(top, None)
    return ops, parents, blocks


def _fallback_location(context, custom_text):
    """One real location for everything: the first file:line:col of the printout (the kernel's `def` line).

    Not unknown: Triton's LLVMDIScope pass rejects a call without a location inside a function with one.
    """
    m = re.search(r'loc\(("(?:[^"\\]|\\.)*"):(\d+):(\d+)\)', custom_text)
    try:
        return _build_locations(context, [], {f"{m.group(1)}:{m.group(2)}:{m.group(3)}"}).popitem()[1]
    except Exception:  # no file location at all (or an unparsable one)
        return ir.Location.unknown(context)


def _align(generic_names, custom_names):
    """For each generic op (pre-order), the index of the same op in the custom printout, or None if a
    custom printer hides it. Raises ValueError on any other difference."""
    custom_of, j = [], 0
    for c, name in enumerate(custom_names):
        while j < len(generic_names) and not _same_op(generic_names[j], name):
            if generic_names[j] not in _triton.CUSTOM_FORM_HIDDEN_OPS:
                raise ValueError(f"op {j} is {generic_names[j]} in generic form but {name} in custom form")
            custom_of.append(None)
            j += 1
        if j == len(generic_names):
            raise ValueError(f"custom form has more ops than generic form (first extra: {name})")
        custom_of.append(c)
        j += 1
    extra = [n for n in generic_names[j:] if n not in _triton.CUSTOM_FORM_HIDDEN_OPS]
    if extra:
        raise ValueError(f"generic form has ops the custom form lacks: {extra[:3]}")
    return custom_of + [None] * (len(generic_names) - j)


def _same_op(generic_name: str, custom_name: str) -> bool:
    # custom printers may drop the dialect prefix (`module`, ops of an op's default dialect)
    return generic_name == custom_name or ("." not in custom_name and generic_name.endswith("." + custom_name))


def _parse_custom(text: str):
    """From custom assembly: (loc alias definition lines, [(op name, trailing loc)] in pre-order,
    {custom index of a block's first op: [block-argument loc texts]}).

    Every op starts on its own line; an op ends on the line that ends with its trailing `loc(...)`. Nested
    ops are indented deeper than their parent; block labels, region separators (`} else {`, `default {`,
    `partition0(...) {`) and the closing line sit at the parent's indentation. The other `loc(...)` on a
    line (function header, `^bb` label, partition header) belong to the arguments of the block whose first
    op comes next.
    """
    loc_defs, ops, open_ops, groups = [], [], [], {}  # ops: [name, loc]; open_ops: [(index, indent)]
    for line in text.splitlines():
        body = line.strip()
        if not body:
            continue
        if body.startswith("{-#"):
            break
        if _LOC_DEF.match(body):
            loc_defs.append(body)
            continue
        if line[0] in "#!":  # attribute/type aliases
            continue
        indent = len(line) - len(line.lstrip(" "))
        trailing, inner = _locs(body)
        if open_ops and indent <= open_ops[-1][1]:
            if indent < open_ops[-1][1]:
                raise ValueError(f"unexpected dedent at {body[:60]!r}")
            if inner:
                groups[len(ops)] = inner
            if trailing is not None:
                ops[open_ops.pop()[0]][1] = trailing
            continue
        m = _OP_NAME.match(body)
        if body.startswith("^") or not m:
            raise ValueError(f"cannot read an op name in {body[:60]!r}")
        ops.append([m.group(1) or m.group(2), trailing])
        if inner:
            groups[len(ops)] = inner
        if trailing is None:
            open_ops.append((len(ops) - 1, indent))
    if open_ops:
        raise ValueError("unterminated op in custom printout")
    return loc_defs, [tuple(op) for op in ops], groups


def _locs(line: str):
    """(trailing `loc(...)` text or None, [texts of the other `loc(...)` on the line]), outside strings."""
    if "loc(" not in line:
        return None, []
    at = line.find("loc(")
    if ('"' not in line and line.endswith(")") and (at == 0 or line[at - 1] == " ")
            and "(" not in line[at + 4:-1] and ")" not in line[at + 4:-1]):
        return line[at + 4:-1], []   # most lines: one `loc(#locN)` at the end, no string literal to look into
    return _scan_locs(line)


def _scan_locs(line: str):
    """`_locs` for any line: parentheses matched outside string literals."""
    stack, found, n = [], [], len(line)
    for m in _LOC_TOKEN.finditer(line):  # strings (skipped whole) and parentheses, found by the regex engine
        c = m.group()
        if c == "(":
            stack.append(m.start())
        elif c == ")":
            start, i = stack.pop() if stack else -1, m.start()
            if start >= 3 and line[start - 3:start] == "loc" and (start == 3 or line[start - 4] == " "):
                found.append((start, i))
    trailing = None  # MLIR never nests `loc(` inside a location
    if found and found[-1][1] == n - 1:
        a, b = found.pop()
        trailing = line[a + 1:b]
    return trailing, [line[a + 1:b] for a, b in found]


def _build_locations(context, loc_defs, loc_texts):
    """Location objects for each distinct loc text; the upstream parser resolves `#locN` aliases."""
    texts = sorted(loc_texts)
    aux = "\n".join(loc_defs + [f'"tlx.loc"() : () -> () loc({t})' for t in texts])
    mod = ir.Module.parse(aux, context)
    return {t: op.location for t, op in zip(texts, mod.body.operations)}


# ------------------------------------------------------------------------------------------ back

def to_triton(upstream_module, aliases, triton_context):
    """Upstream module (+ the alias definitions it still references) -> Triton module in `triton_context`."""
    t0 = time.perf_counter()
    body = upstream_module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    if _ELIDED in body:
        raise BridgeError("the upstream printout elided a large constant")
    text = "".join(f"{name} = {value}\n" for name, value in (aliases or {}).items()) + body
    module, err = _triton.parse(text, triton_context)
    if module is None:
        raise BridgeError(f"Triton could not parse the lowered module ({keep_ir(text)}):\n{err.strip()}")
    last_stats["to_triton_ms"] = (time.perf_counter() - t0) * 1e3
    return module


KEEP_IR_ENV = "TLX_ALIAS_KEEP_IR"


def keep_ir(text: str) -> str:
    """Where the text was kept for a bug report: a file in the directory TLX_ALIAS_KEEP_IR names, or a hint."""
    keep = os.environ.get(KEEP_IR_ENV)
    if not keep:
        return f"set {KEEP_IR_ENV}=<directory> to keep it for a bug report"
    os.makedirs(keep, exist_ok=True)
    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="tlx-alias-lowered-", dir=keep)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return f"kept at {path}"

