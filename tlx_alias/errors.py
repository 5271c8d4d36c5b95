"""The one error type for user mistakes, and the one warning type.

`str(TlxAliasError(...))` reads like a compiler diagnostic:
`fa.py:40: error: [tlx-buffer-offset] the problem. Fix: what to change`.
"""

from __future__ import annotations

import os
import re
import warnings


class TlxAliasError(Exception):
    """A user mistake found by the frontend, a pass or the verifier.

    where: pass or API name ("tlx-buffer-offset", "local_alloc"); problem: what is wrong;
    fix: what to change; src: "file.py:LINE" of the kernel line, or None.
    """

    def __init__(self, where: str, problem: str, fix: str | None = None, src: str | None = None):
        self.where, self.problem, self.fix, self.src = where, problem, fix, src
        super().__init__(where, problem, fix, src)

    def __str__(self) -> str:
        text = f"[{self.where}] {self.problem}" if self.where else str(self.problem)
        if self.fix:
            text += f". Fix: {self.fix}"
        return f"{self.src}: error: {text}" if self.src else f"error: {text}"


class TlxAliasWarning(UserWarning):
    """A layout that compiles but is probably not what the author meant."""


def warn_at(src: str | None, message: str) -> None:
    """Issue a TlxAliasWarning attributed to the kernel line `src` ("file.py:LINE"): Python's warning display
    and filters then point at the user's kernel, not at the plugin. Without a line, at the caller's caller."""
    m = re.fullmatch(r"(.+):(\d+)", src or "")
    if m:
        warnings.warn_explicit(TlxAliasWarning(message), TlxAliasWarning, m.group(1), int(m.group(2)))
    else:
        warnings.warn(TlxAliasWarning(f"{src}: {message}" if src else message), stacklevel=3)


def env_mode(env: str, modes: tuple, default: str, where: str) -> str:
    """The value of the knob `env` (a TLX_ALIAS_* variable), one of `modes`, `default` when unset or empty
    (case and spaces ignored). Any other value is a TlxAliasError naming the knob and its values: a misspelt
    knob must not silently mean the default."""
    mode = os.environ.get(env, "").strip().lower() or default
    if mode not in modes:
        raise TlxAliasError(where, f"{env}={mode!r} is not one of {', '.join(modes)}",
                            f"set {env} to one of {', '.join(modes)} (default {default})")
    return mode
