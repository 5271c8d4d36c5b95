"""Read dumped IR into an upstream-bindings module: `.ttgir` custom form from Triton, or generic `.mlir`.

`load(path) -> Loaded(module, aliases)`. Custom-form Triton text is parsed by Triton itself
(`triton._C.libtriton.ir.parse_mlir_module`, all dialects loaded) and bridged with
`tlx_alias.bridge.to_upstream` (the plugin's own bridge: generic text with locations).
Anything unreadable (not UTF-8, not parsable, no `tt.func`) raises `InputError` (CLI exit code 2) whose
message starts with the user's file, and line:col where the parser stopped. IR that parses but that its
dialects' verifiers would reject (`verify.wellformed.MalformedIR`, met while proving) becomes an InputError at
the op's line:col in the user's file with `malformed(loaded, exc)`.
"""
from __future__ import annotations

import os
import re
import signal
import tempfile
import warnings
from dataclasses import dataclass

from tlx_alias._mlir import ir, new_context
from tlx_alias.memdesc import parse_aliases
from tlx_alias.textin import NotText, decode

from .encode import loc_info
from .wellformed import has_body


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
    how: str                       # "generic", "bridge"
    context: object = None         # keep the upstream context alive with the module
    text: str = ""                 # the input as read (to find an op's line:col in it)


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


IR_DUMP_LOG = "// -----// IR Dump "   # how MLIR_ENABLE_DUMP heads each module it prints


def load(path: str) -> Loaded:
    text = read(path)
    if text.lstrip().startswith(IR_DUMP_LOG):   # a log of the module after every pass, not one module
        raise InputError(f"{path}: this is an MLIR_ENABLE_DUMP log ({text.count(IR_DUMP_LOG)} modules, one per "
                         "pass), not one kernel: give tlx-verify the kernel's .ttgir (TRITON_KERNEL_DUMP=1 with "
                         "TRITON_DUMP_DIR, or the .ttgir in TRITON_CACHE_DIR)")
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
    loaded.text = text
    if not any(op.operation.name == "tt.func" and has_body(op) for op in loaded.module.body.operations):
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
    from tlx_alias import _triton   # (imports triton: only for Triton-form input)
    died = parser_dies_on(text)
    if died:
        raise InputError(f"{path}: Triton's own parser aborts the process on this file ({died}) (reading it as "
                         "Triton IR; a Triton bug, e.g. 3.8 on a shared-memory shape whose inner dimensions are "
                         "not powers of two; nothing in this file was checked)")
    tmod, err = _triton.parse(text, _triton.new_context(), name=path)
    if tmod is None:
        m = re.search(r"^(loc\(.*\)): error: (.*)$", err, re.M)
        first = m.groups() if m else ("", _first_line(err))
        raise _parse_error(path, "Triton IR", *first, (f'"{path}"',))
    try:
        from tlx_alias.bridge import to_upstream   # (imports triton: only for Triton-form input)
        module, aliases = to_upstream(tmod)
    except Exception as exc:
        raise InputError(f"{path}: Triton -> upstream bridge failed: {type(exc).__name__}: {_first_line(exc)}"
                         ) from None
    return Loaded(module, dict(aliases), path, "bridge", module.context)


def parser_dies_on(text: str) -> str | None:
    """How Triton's parser dies on `text` ("SIGABRT"), or None if it returns (with a module or an error).

    Triton's parser aborts the whole process on some text it should reject (3.8: a shared memdesc whose inner
    dimensions are not powers of two, an assertion in its layout code), which no Python code can catch.
    tlx-verify reads files it did not write, so it parses each first in a forked child; where the child's
    parse needs a temporary file (no in-memory file: `_triton._text_at_a_path`) it goes to a directory the
    parent removes, so an abort leaves no file behind.
    """
    from tlx_alias import _triton   # (imports triton: only for Triton-form input)
    with tempfile.TemporaryDirectory(prefix="tlx-verify-") as scratch:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # 3.12: fork() of a process with threads
            pid = os.fork()
        if pid == 0:   # the child: parse, and say nothing (the parent parses again and reports)
            try:
                tempfile.tempdir = scratch
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                _triton.parse(text, _triton.new_context())
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return None


def malformed(loaded: Loaded, exc) -> InputError:
    """The InputError for `exc` (a MalformedIR met while proving `loaded`): `path:line:col: problem`, with the
    op's position in the user's file when it can be found (generic text), else the op's own location."""
    op = exc.op
    pos = op_position(loaded.text, loaded.module, op) if op is not None and loaded.how == "generic" else None
    what, why = (("unsupported IR", "tlx-verify cannot size this memory; nothing in this file was checked")
                 if exc.unsupported else
                 ("malformed IR", "Triton's parser would reject it; nothing in this file was checked"))
    if pos is not None:
        return InputError(f"{loaded.path}:{pos[0]}:{pos[1]}: {what}: {exc.problem} ({why})", pos)
    src = loc_info(op.location, loaded.path)[1] if op is not None else ""
    at = f" (the {op.name} at {src})" if src else ""
    return InputError(f"{loaded.path}: {what}: {exc.problem}{at} ({why})")


def op_position(text: str, module, op) -> tuple | None:
    """(line, col) of `op` in the generic text `module` was parsed from; None when it cannot be told.

    The module's own locations are the kernel's source lines (`loc(...)` in the text), not positions in the
    file. The text is parsed once more with every `loc(...)` blanked out, where the parser gives each op the
    position it read it at; both parses hold the same ops in the same pre-order."""
    index = next((k for k, o in enumerate(_preorder(module.operation)) if o == op), None)
    if index is None:
        return None
    ctx = new_context()
    try:
        bare = ir.Module.parse(strip_locations(text), ctx)
    except Exception:  # MLIRError: not generic text after all
        return None
    ops = _preorder(bare.operation)
    if index >= len(ops) or ops[index].name != op.name:
        return None
    m = re.fullmatch(r'loc\(".*":(\d+):(\d+)\)', str(ops[index].location))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _preorder(root) -> list:
    out = []
    root.walk(lambda o: (out.append(getattr(o, "operation", o)), ir.WalkResult.ADVANCE)[1], ir.WalkOrder.PRE_ORDER)
    return out


def strip_locations(text: str) -> str:
    """`text` with every `loc(...)` (outside string literals) and every `#loc` alias definition replaced by
    spaces, newlines kept: each remaining character stays at its line and column."""
    out, i, n = list(text), 0, len(text)
    quoted = False
    while i < n:
        ch = text[i]
        if quoted:
            if ch == "\\":
                i += 2
                continue
            quoted = ch != '"'
        elif ch == '"':
            quoted = True
        elif text.startswith("loc(", i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.$#!")):
            j, depth, q = i + 4, 1, False
            while j < n and depth:
                c = text[j]
                if q:
                    if c == "\\":
                        j += 1
                    elif c == '"':
                        q = False
                elif c == '"':
                    q = True
                elif c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                j += 1
            out[i:j] = [c if c == "\n" else " " for c in text[i:j]]
            i = j
            continue
        i += 1
    bare = "".join(out)
    return re.sub(r"^#loc[\w.$-]*\s*=[ \t]*$", lambda m: " " * len(m.group(0)), bare, flags=re.M)


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
