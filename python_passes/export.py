"""tlx-export: check the module is plain Triton IR again before it goes back to Triton.

Precondition: the lowering passes have run. No `tlx.*` op or type may remain (Triton cannot parse them);
`tlx.*` discardable attributes stay — they name views and sources for the verifier and tlx-verify.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._ir import ModulePass, PassContext, fail, walk


@dataclass(frozen=True)
class TlxExport(ModulePass):
    name = "tlx-export"

    def apply(self, module, ctx: PassContext) -> None:
        for op in walk(module):
            if op.name.startswith("tlx."):
                fail(op, self.name, f"'{op.name}' survived the lowering",
                     "run tlx-size-definition, tlx-buffer-offset and tlx-storage-alias-allocation first")
            for result in op.results:
                if "!tlx." in str(result.type):
                    fail(op, self.name, f"a value of type {result.type} survived the lowering",
                         "run the full tlx lowering pipeline")
