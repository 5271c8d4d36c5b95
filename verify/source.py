"""Read dumped IR into an upstream-bindings module: `.ttgir` custom form from Triton, or generic `.mlir`.

`load(path) -> Loaded(module, aliases)`. Custom-form Triton text is parsed by Triton itself
(`triton._C.libtriton.ir.parse_mlir_module`, all dialects loaded) and bridged with
`tlx_alias.bridge.to_upstream` (the plugin's own bridge: generic text, locations restored).
Anything unreadable raises `InputError` (CLI exit code 2).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tlx_alias._mlir import ir, new_context

from tlx_alias.memdesc import parse_aliases


class InputError(Exception):
    """The input cannot be read as Triton or generic MLIR."""


@dataclass
class Loaded:
    module: object
    aliases: dict
    path: str
    how: str                       # "generic", "bridge", "fallback"
    notes: list = field(default_factory=list)
    context: object = None         # keep the upstream context alive with the module


def load(path: str) -> Loaded:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    generic_first = not path.endswith((".ttgir", ".ttir", ".llir"))
    errors = []
    for how in (("generic", "triton") if generic_first else ("triton", "generic")):
        try:
            return (load_generic if how == "generic" else load_triton)(text, path)
        except InputError as exc:
            errors.append(str(exc))
    raise InputError(f"{path}: not readable as generic MLIR nor as Triton IR:\n  " + "\n  ".join(errors))


def load_generic(text: str, path: str = "<text>") -> Loaded:
    ctx = new_context()
    try:
        module = ir.Module.parse(text, ctx)
    except Exception as exc:  # MLIRError: the parser's diagnostics
        raise InputError(f"generic MLIR parse failed: {_first_line(exc)}") from None
    return Loaded(module, parse_aliases(text), path, "generic", context=ctx)


def load_triton(text: str, path: str = "<text>") -> Loaded:
    from tlx_alias import _triton
    tmod, err = _triton.parse(text, _triton.new_context())
    if tmod is None:
        raise InputError(f"Triton parse failed: {_first_line(err)}" + "".join(
            f"\n    {line}" for line in err.splitlines()[1:] if "error:" in line))
    try:
        import warnings
        from tlx_alias.bridge import to_upstream
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module, aliases = to_upstream(tmod)
    except Exception as exc:
        raise InputError(f"Triton -> upstream bridge failed: {type(exc).__name__}: {_first_line(exc)}") from None
    return Loaded(module, dict(aliases), path, "bridge", [str(w.message) for w in caught], module.context)


def _first_line(exc) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0] if msg else type(exc).__name__
