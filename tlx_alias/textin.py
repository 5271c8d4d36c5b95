"""Reading the MLIR text a tool was given: UTF-8 or a message that points at the offending byte.

`tlx-verify` and `tlx-opt` read bytes and decode here, so a binary file, or one stray byte in a comment,
is an input error naming the file, line and column instead of a UnicodeDecodeError traceback.
"""
from __future__ import annotations

import os

PARSE_FILE_PREFIX = "tlx-alias-text"
"""The name of the file Triton's parser reads a text from (`tlx_alias._triton.parse`): an in-memory file of
this name, seen as FD_DIR/N, or a temporary file with this prefix."""
FD_DIR = "/proc/self/fd"


class NotText(ValueError):
    """The bytes are not UTF-8 text; the message names the file, line, column and byte offset."""


def decode(data: bytes, name: str) -> str:
    """`data` as text, or NotText naming the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start
        line_start = data.rfind(b"\n", 0, at) + 1
        line = data.count(b"\n", 0, at) + 1
        col = len(data[line_start:at].decode("utf-8")) + 1   # characters, as an editor counts them
        raise NotText(f"{name}:{line}:{col}: not UTF-8 text: byte 0x{data[at]:02x} at offset {at}; "
                      "MLIR input must be UTF-8 (remove or re-encode that byte; a binary file cannot be read)"
                      ) from None


def read_by_triton(filename: str) -> bool:
    """Is `filename` where Triton's parser read a tool's text (`PARSE_FILE_PREFIX`)? The locations it gave ops
    without one are lines of that text, i.e. of the tool's input file."""
    return filename.startswith(FD_DIR + "/") or os.path.basename(filename).startswith(PARSE_FILE_PREFIX)
