"""Run tlx passes on an upstream-bindings module through a PassManager of Python passes.

Each pass object is added with `PassManager.add(callable, name=...)`. A pass that meets a user mistake
raises TlxAliasError; the callable records it and signals failure, and `run` raises it again outside MLIR.
Options (`target`, `exact_views`, `row_windows`) go to the passes that declare them as fields.
The module is verified once, after the last pass (`verify_each`: after every pass, as mlir-opt does; tlx-opt
asks for that): here Triton's ops are unregistered, so the upstream verifier checks little beyond builtin
ops, yet verifying after each of the five passes took 0.43 of the pipeline's 2.0 ms on blackwell_gemm; Triton
verifies the lowered module in full when it parses it back.
"""

from __future__ import annotations

import dataclasses

from tlx_alias._mlir import passmanager
from tlx_alias.errors import TlxAliasError, warn_at

from . import PIPELINE, get_all_passes
from ._ir import PassContext


def build(names=PIPELINE, **options) -> list:
    """The pass objects for `names`, each given the options it has a field for."""
    registry = get_all_passes()
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ValueError(f"unknown pass(es) {unknown}; known: {sorted(registry)}")
    out = []
    for name in names:
        cls = registry[name]
        fields = {f.name for f in dataclasses.fields(cls)}
        out.append(cls(**{k: v for k, v in options.items() if k in fields}))
    return out


def run(module, names=PIPELINE, aliases=None, verify_each=False, **options) -> PassContext:
    ctx = PassContext(aliases=dict(aliases or {}))
    with module.context:
        pm = passmanager.PassManager.parse("builtin.module()")
        pm.enable_verifier(verify_each)
        for p in build(names, **options):
            pm.add(_as_pass(p, ctx), name=p.name)
        try:
            pm.run(module.operation)
        except Exception:
            if ctx.error is not None:
                raise ctx.error from None
            raise
        if ctx.error is not None:
            raise ctx.error
        if not verify_each:
            module.operation.verify()   # raises MLIRError, as a failed verification in pm.run does
    return ctx


def _as_pass(p, ctx):
    def python_pass(op, pass_):
        if ctx.error is not None:
            pass_.signal_pass_failure()
            return
        try:
            p.apply(op, ctx)
        except TlxAliasError as err:
            ctx.error = err
            pass_.signal_pass_failure()
    return python_pass


def lower(module, aliases=None, target=None, exact_views: bool = False, row_windows: bool = False) -> PassContext:
    """The plugin's entry: full lowering; warnings go to Python's warnings machinery."""
    ctx = run(module, PIPELINE, aliases=aliases, target=target, exact_views=exact_views, row_windows=row_windows)
    for src, message in ctx.warnings:
        warn_at(src, message)
    return ctx
