"""Triton module <-> upstream MLIR module (`tlx_alias._mlir`), through generic-form text.

Small and isolated on purpose: a Triton API that hands modules between bindings replaces it.

Out of Triton (`to_upstream`): the generic printout with every op's and block argument's location
(`tlx_alias._triton.print_generic`), parsed by the upstream bindings; opaque types keep their `#alias`
references verbatim, so the alias definitions are returned beside the module.

Back into Triton (`to_triton`): generic text with `loc(...)`, with the alias definitions prepended.
"""

from __future__ import annotations

import os
import tempfile
import time

from tlx_alias import _triton
from tlx_alias._mlir import ir, new_context
from tlx_alias.memdesc import parse_aliases

__all__ = ["BridgeError", "to_upstream", "to_triton", "last_stats"]

last_stats: dict = {}
"""Figures of the latest call: to_upstream_ms, to_triton_ms, bytes (of the generic printout)."""

_ELIDED = "__elided__"


class BridgeError(RuntimeError):
    """An internal failure of the IR bridge (not a user mistake)."""


# ------------------------------------------------------------------------------------------ out

def to_upstream(triton_module, context=None):
    """Triton module -> (upstream `ir.Module`, aliases). aliases: {"#blocked": "#ttg.blocked<...>", ...} in order,
    the attribute and type aliases (location aliases are the parser's own: the upstream printout makes new ones)."""
    last_stats.clear()
    t0 = time.perf_counter()
    text = _triton.print_generic(triton_module)
    if _ELIDED in text:
        raise BridgeError("Triton's generic printout elided a large constant (dense_resource<__elided__>); "
                          "refusing to hand a truncated module back to Triton")
    aliases = parse_aliases(text)
    try:
        module = ir.Module.parse(text, context or new_context())
    except Exception as exc:
        raise BridgeError(f"upstream bindings could not parse Triton's generic printout: {exc}") from None
    last_stats.update(to_upstream_ms=(time.perf_counter() - t0) * 1e3, bytes=len(text))
    return module, aliases


# ------------------------------------------------------------------------------------------ back

def to_triton(upstream_module, aliases, triton_context):
    """Upstream module (+ the alias definitions it still references) -> Triton module in `triton_context`."""
    t0 = time.perf_counter()
    body = upstream_module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    if _ELIDED in body:
        raise BridgeError("the upstream printout elided a large constant")
    text = "".join(f"{name} = {value}\n" for name, value in (aliases or {}).items()) + body
    module, err = _triton.parse(text, triton_context, borrow_stderr=False)
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

