"""tlx-opt: run tlx-alias passes on generic-form MLIR, like mlir-opt.

  tlx-opt FILE.mlir [--pass NAME ...] [--split-input-file] [--verify-diagnostics] [--target cuda:100]
          [--exact-views] [--row-windows]

Without --pass the whole pipeline runs. With --verify-diagnostics, `// expected-error @+N {{text}}` and
`// expected-warning ...` comments must match the diagnostics exactly (line and substring), as in mlir-opt.
"""

from __future__ import annotations

import argparse
import re
import sys

from tlx_alias._mlir import ir, new_context
from tlx_alias.errors import TlxAliasError
from tlx_alias.textin import NotText, decode

from . import PIPELINE, get_all_passes
from .pipeline import run

_ALIAS_RE = re.compile(r"^(#[A-Za-z_][\w.$-]*)\s*=\s*(.+)$", re.M)
_EXPECT_RE = re.compile(r"//\s*expected-(error|warning)\s*(?:@([+-]\d+))?\s*\{\{(.*?)\}\}")
_LINE_RE = re.compile(r":(\d+)(?::\d+)?$")


def split_chunks(text: str, split: bool):
    """(first line number, text) per `// -----` chunk; chunk text padded so line numbers stay true."""
    if not split:
        return [(1, text)]
    chunks, start, cur = [], 1, []
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        if line.strip() == "// -----":
            chunks.append((start, "".join(cur)))
            start, cur = n + 1, []
        else:
            cur.append(line)
    chunks.append((start, "".join(cur)))
    return chunks


def expectations(chunk: str, first_line: int):
    out = []
    for n, line in enumerate(chunk.splitlines(), first_line):
        for kind, rel, msg in _EXPECT_RE.findall(line):
            out.append((kind, n + int(rel or 0), msg))
    return out


def process(chunk: str, first_line: int, path: str, passes, target, verify: bool, out, exact_views=False,
            row_windows=False) -> bool:
    aliases = dict(_ALIAS_RE.findall(chunk))
    ctx = new_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse("\n" * (first_line - 1) + chunk)
    diags, ok = [], True
    try:
        result = run(module, passes, aliases=aliases, verify_each=True, target=target, exact_views=exact_views,
                     row_windows=row_windows)
        diags += [("warning", src, msg) for src, msg in result.warnings]
    except TlxAliasError as err:
        diags.append(("error", err.src, f"[{err.where}] {err.problem}. Fix: {err.fix}"))
        ok = False
    if verify:
        return _verify(diags, expectations(chunk, first_line), path, out)
    for kind, src, msg in diags:
        print(f"{_display(src, path)}: {kind}: {msg}", file=sys.stderr)
    if ok:
        for name, value in aliases.items():
            out.write(f"{name} = {value}\n")
        out.write(module.operation.get_asm(print_generic_op_form=True) + "\n")
    return ok


def _display(src, path):
    if not src:
        return path
    return re.sub(r"^(-|<stdin>|<unknown>)?:", f"{path}:", src) if src.startswith(("-:", "<")) else src


def _line(src):
    m = _LINE_RE.search(src or "")
    return int(m.group(1)) if m else None


def _verify(diags, expected, path, out) -> bool:
    ok = True
    remaining = list(expected)
    for kind, src, msg in diags:
        line = _line(src)
        hit = next((e for e in remaining if e[0] == kind and e[1] == line and e[2] in msg), None)
        if hit:
            remaining.remove(hit)
        else:
            print(f"{path}:{line}: unexpected {kind}: {msg}", file=sys.stderr)
            ok = False
    for kind, line, msg in remaining:
        print(f"{path}:{line}: expected {kind} \"{msg}\" was not produced", file=sys.stderr)
        ok = False
    return ok


def main(argv=None) -> int:
    known = sorted(get_all_passes())
    ap = argparse.ArgumentParser(prog="tlx-opt", description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--pass", dest="passes", action="append", choices=known, metavar="NAME",
                    help=f"pass to run (repeatable, in order); one of {', '.join(known)}")
    ap.add_argument("--split-input-file", action="store_true")
    ap.add_argument("--verify-diagnostics", action="store_true")
    ap.add_argument("--target", default=None, help="e.g. cuda:90 (sets the SMEM limit)")
    ap.add_argument("--exact-views", action="store_true",
                    help="lower as for Triton 3.8, whose reinterpret keeps the size: pad specs so every view tiles")
    ap.add_argument("--row-windows", action="store_true",
                    help="lower as for Triton 3.9: each SMEM view starts at the backing row of its first buffer")
    args = ap.parse_args(argv)
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                data = f.read()
        text = decode(data, "<stdin>" if args.file == "-" else args.file)
    except OSError as err:
        print(f"tlx-opt: cannot read {args.file}: {err.strerror}", file=sys.stderr)
        return 2
    except NotText as err:
        print(f"tlx-opt: error: {err}", file=sys.stderr)
        return 2
    passes = tuple(args.passes or PIPELINE)
    ok = True
    for i, (first, chunk) in enumerate(split_chunks(text, args.split_input_file)):
        if i:
            sys.stdout.write("// -----\n")
        try:
            ok &= process(chunk, first, args.file, passes, args.target, args.verify_diagnostics, sys.stdout,
                          args.exact_views, args.row_windows)
        except ir.MLIRError as err:
            print(f"{args.file}: error: cannot parse input: {err}", file=sys.stderr)
            return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
