"""Small helpers over the upstream MLIR bindings shared by the tlx passes.

Triton's ops are unregistered here: we read and write them by name, attributes and operands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from tlx_alias.memdesc import MalformedType, UnsizedType, parse_memdesc
from tlx_alias._mlir import ir, to_attr
from tlx_alias.errors import TlxAliasError


@dataclass
class PassContext:
    """What every pass of one pipeline run shares: alias definitions, diagnostics, cached analyses."""
    aliases: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)   # (src, message)
    error: TlxAliasError | None = None
    analyses: dict = field(default_factory=dict)
    separations: list = field(default_factory=list)   # tlx_alias.underuse.Separation, for the under-use hint

    def warn(self, op, message: str, src: str | None = None):
        self.warnings.append((src or src_of(op), message))


@dataclass(frozen=True)
class ModulePass:
    """A pass over a module (xDSL's shape): a kebab-case `name`, options as fields, `apply`."""
    name: ClassVar[str] = ""

    def apply(self, module, ctx: PassContext) -> None:
        raise NotImplementedError


def walk(op):
    """Pre-order list of every operation nested in `op` (including `op`), by MLIR's own walk: a third
    cheaper than descending regions and blocks through the bindings (each level a Python object)."""
    out = []
    op = op.operation if hasattr(op, "operation") else op
    op.walk(lambda o: (out.append(o), ir.WalkResult.ADVANCE)[1], ir.WalkOrder.PRE_ORDER)
    return out


def ops_named(module, *names):
    return [o for o in walk(module) if o.name in names]


def str_attr(op, name, default=None):
    attrs = op.attributes
    if name not in attrs:
        return default
    return ir.StringAttr(attrs[name]).value


def int_attr(op, name, default=None):
    attrs = op.attributes
    if name not in attrs:
        return default
    return ir.IntegerAttr(attrs[name]).value


def ints_attr(op, name):
    attrs = op.attributes
    if name not in attrs:
        return []
    return list(ir.DenseI64ArrayAttr(attrs[name]))


def set_str(op, name, value: str):
    op.attributes[name] = ir.StringAttr.get(value)


def set_int(op, name, value: int, bits=64):
    """An i64 attribute (`_mlir.to_attr`), or of another width where an op's own attribute asks for one."""
    op.attributes[name] = to_attr(value) if bits == 64 else ir.IntegerAttr.get(ir.IntegerType.get_signless(bits),
                                                                                value)


def set_ints(op, name, values):
    op.attributes[name] = to_attr(list(values))


_LOC_RE = re.compile(r'"([^"]+)":(\d+)(?::(\d+))?')


def src_of(op) -> str | None:
    """The user's source line for `op`: its `tlx.src` tag, else its own file location."""
    src = str_attr(op, "tlx.src")
    if src:
        return src
    m = _LOC_RE.search(str(op.location))
    return f"{m.group(1)}:{m.group(2)}" if m else None


def fail(op, where: str, problem: str, fix: str, src: str | None = None):
    raise TlxAliasError(where, problem, fix, src or src_of(op))


def memdesc_of(value, aliases=None):
    """The value's memdesc type, encodings resolved through `aliases` (None if not a memdesc). A type its
    dialect would reject (possible only in generic text) or of an element type without a known width is an
    error at the op that defines the value."""
    try:
        return parse_memdesc(str(value.type), aliases)
    except MalformedType as exc:
        owner = value.owner
        op = owner.owner if isinstance(owner, ir.Block) else owner   # a block argument: the op of its region
        op = getattr(op, "operation", op)
        if isinstance(exc, UnsizedType):
            fail(op, "tlx-alias", f"unsupported layout: {exc}", UnsizedType.FIX)
        fail(op, "tlx-alias", f"malformed type: {exc}", "write the type as Triton prints it (TMEM encoding sizes "
             "positive integers; an element type of the ttg dialect)")


def display_name(op) -> str:
    """A readable name for an aliased allocation: the Python variable if known, else its id."""
    name = str_attr(op, "tlx.name")
    if name:
        return name
    m = re.match(r'loc\("([A-Za-z_][A-Za-z0-9_]*)"\(', str(op.location))
    if m:
        return m.group(1)
    return str_attr(op, "tlx.alloc") or op.result.get_name()
