"""Read dumped IR into an upstream-bindings module: `.ttgir` custom form from Triton, or generic `.mlir`.

`load(path) -> Loaded(module, aliases)`. Custom-form Triton text is parsed by Triton itself
(`triton._C.libtriton.ir.parse_mlir_module`, all dialects loaded) and bridged with
`tlx_alias.bridge.to_upstream` (the plugin's own bridge: generic text, locations restored).
Anything unreadable (not UTF-8, not parsable, no `tt.func`) raises `InputError` (CLI exit code 2) whose
message starts with the user's file, and line:col where the parser stopped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from tlx_alias._mlir import ir, new_context
from tlx_alias.memdesc import parse_aliases
from tlx_alias.textin import NotText, decode


class InputError(Exception):
    """The input cannot be read as Triton or generic MLIR, or holds no kernel.

    pos: (line, col) of a parse error in the input, or None; of two failed readings the one that got
    further is the one reported (it is most likely the form the file was meant to be in).
    """

    def __init__(self, message: str, pos: tuple | None = None):
        super().__init__(message)
        self.pos = pos


@dataclass
class Loaded:
    module: object
    aliases: dict
    path: str
    how: str                       # "generic", "bridge", "fallback"
    notes: list = field(default_factory=list)
    context: object = None         # keep the upstream context alive with the module


def read(path: str) -> str:
    """The file's text; InputError for a file that cannot be read or is not UTF-8."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return decode(data, path)
    except NotText as exc:
        raise InputError(str(exc)) from None


def load(path: str) -> Loaded:
    text = read(path)
    generic_first = not path.endswith((".ttgir", ".ttir", ".llir"))
    errors = []
    for how in (("generic", "triton") if generic_first else ("triton", "generic")):
        try:
            loaded = (load_generic if how == "generic" else load_triton)(text, path)
            break
        except InputError as exc:
            errors.append(exc)
    else:
        raise max(errors, key=lambda e: e.pos or (0, 0))   # first of equals: the form the suffix says
    if not any(op.operation.name == "tt.func" for op in loaded.module.body.operations):
        raise InputError(f"no kernel (tt.func) found in {path}: tlx-verify checks the kernels of a Triton "
                         ".ttgir dump (cache or TRITON_KERNEL_DUMP) or of generic-form .mlir")
    return loaded


def load_generic(text: str, path: str = "<text>") -> Loaded:
    ctx = new_context()
    try:
        module = ir.Module.parse(text, ctx)
    except Exception as exc:  # MLIRError: the parser's diagnostics
        diags = getattr(exc, "error_diagnostics", None)
        first = (str(diags[0].location), diags[0].message) if diags else ("", _first_line(exc))
        raise _parse_error(path, "generic MLIR", *first, ('"-"',)) from None
    return Loaded(module, parse_aliases(text), path, "generic", context=ctx)


def load_triton(text: str, path: str = "<text>") -> Loaded:
    from tlx_alias import _triton
    tmod, err = _triton.parse(text, _triton.new_context(), name=path)
    if tmod is None:
        m = re.search(r"^(loc\(.*\)): error: (.*)$", err, re.M)
        first = m.groups() if m else ("", _first_line(err))
        raise _parse_error(path, "Triton IR", *first, (f'"{path}"',))
    try:
        import warnings
        from tlx_alias.bridge import to_upstream
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module, aliases = to_upstream(tmod)
    except Exception as exc:
        raise InputError(f"{path}: Triton -> upstream bridge failed: {type(exc).__name__}: {_first_line(exc)}"
                         ) from None
    return Loaded(module, dict(aliases), path, "bridge", [str(w.message) for w in caught], module.context)


def _parse_error(path, form, loc, message, names) -> InputError:
    """`path:line:col: message (as <form>)` when the diagnostic is in the input; else the location as given."""
    m = re.fullmatch(r'loc\((".*"):(\d+):(\d+)\)', loc)
    if m and m.group(1) in names:
        line, col = int(m.group(2)), int(m.group(3))
        return InputError(f"{path}:{line}:{col}: {message} (reading it as {form})", (line, col))
    where = f" at {loc}" if loc else ""
    return InputError(f"{path}: {message}{where} (reading it as {form})")


def _first_line(exc) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0] if msg else type(exc).__name__
