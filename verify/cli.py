"""tlx-verify: Z3 safety proof of SMEM/TMEM aliasing over dumped IR.

    tlx-verify PATH... [--target sm_100a] [--json] [--map] [--map-svg FILE] [--allow-unproven]

PATH: Triton's own dumps (`.ttgir` custom assembly from the Triton cache or TRITON_KERNEL_DUMP), generic-form
`.mlir`, or a directory: every `.ttgir` under it, recursively, in sorted order. Prints one verdict line per
allocation and property, a summary per input, then one result line per input and the exit status.

Exit status, one meaning each; with several inputs the first of 1, 2, 3 that any input has, else 0 (a
violation is never hidden behind an unreadable file, and an unreadable file never behind "cannot prove"):
  0  every check of every input proven
  1  a violation (counterexample printed)
  2  an input unreadable (not UTF-8, not parsable, malformed IR its dialects reject, no kernel), one the
     proof fails on (an internal error, reported as such), or a usage error (bad option, --map-svg not
     writable)
  3  no violation, but a check the solver could not settle ("cannot prove"); 0 with --allow-unproven
"""
import argparse
import json
import os
import re
import sys

from tlx_alias import targets

SAFE, VIOLATION, UNREADABLE, UNPROVEN = "SAFE", "VIOLATION", "UNREADABLE", "UNPROVEN"
EXIT = {SAFE: 0, VIOLATION: 1, UNREADABLE: 2, UNPROVEN: 3}
PRIORITY = (VIOLATION, UNREADABLE, UNPROVEN, SAFE)      # the first one any input has is the exit status


def trace_text(report) -> str:
    """The interleaving behind each P7 counterexample (the run's last events, oldest first)."""
    out = []
    for v in report.verdicts:
        if v.prop == "P7" and v.status != "proven" and v.data.get("trace"):
            lines = v.data.get("lines") or []
            head = f"P7 trace {v.alloc}: {' -> '.join(lines)}" if lines else f"P7 trace {v.alloc}: {v.detail}"
            out += [head] + [f"  {t}" for t in v.data["trace"]]
    return "\n".join(out) if out else "P7 trace: no counterexample"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tlx-verify", description=__doc__.split("\n\n")[0],
                                epilog=__doc__[__doc__.index("Exit status"):],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH", help=".ttgir (Triton custom form), generic .mlir, or a "
                   "directory of .ttgir files")
    p.add_argument("--target", help="sm_90a, sm_100a, cuda:100, 100 ... (default: the module's ttg.target)")
    p.add_argument("--json", action="store_true", help="one JSON document with every report")
    p.add_argument("--map", action="store_true", help="print each allocation's memory map per buffer index")
    p.add_argument("--map-svg", metavar="FILE", help="write the memory maps as an SVG picture")
    p.add_argument("--trace", action="store_true",
                   help="P7: print the interleaving (threads, accesses, waits) that leads to each counterexample")
    unproven = p.add_mutually_exclusive_group()
    unproven.add_argument("--allow-unproven", action="store_true",
                          help='exit 0 instead of 3 when a check cannot be proven (and nothing is violated)')
    unproven.add_argument("--strict", action="store_true",
                          help='"cannot prove" fails (exit 3): the default; kept for old scripts')
    args = p.parse_args(argv)
    try:
        capability = None if args.target is None else parse_target(args.target)
    except ValueError as exc:
        p.error(str(exc))

    from tlx_alias.errors import TlxAliasError
    from tlx_alias.verify import prove_module
    from tlx_alias.verify.source import InputError, load, malformed
    from tlx_alias.verify.temporal import step_budget
    from tlx_alias.verify.wellformed import MalformedIR
    try:
        step_budget()   # a misspelt knob is a usage error, before any input
    except TlxAliasError as exc:
        p.error(f"{exc.problem} ({exc.fix})")

    results, reports = [], []            # results: (path, status, report or error message)
    for path, error in expand(args.paths):
        if error:
            _say(f"tlx-verify: error: {error}", sys.stderr)
            results.append((path, UNREADABLE, error))
            continue
        try:
            loaded = load(path)
            with loaded.context:
                try:
                    report = prove_module(loaded.module, capability, loaded.aliases, path)
                except MalformedIR as exc:   # parsed, but its dialects would reject it: bad input, at its line
                    raise malformed(loaded, exc) from None
        except InputError as exc:
            _say(f"tlx-verify: error: {exc}", sys.stderr)
            results.append((path, UNREADABLE, str(exc)))
            continue
        except Exception as exc:  # a bug of the proof, not of the input: say so, check the other inputs
            first = (str(exc).strip().splitlines() or [""])[0]
            msg = (f"{path}: the proof failed on this input: {type(exc).__name__}: {first} (a tlx-verify bug; "
                   "please report it with this file)")
            _say(f"tlx-verify: error: {msg}", sys.stderr)
            results.append((path, UNREADABLE, msg))
            continue
        reports.append(report)
        status = VIOLATION if report.violations else UNPROVEN if report.unknowns else SAFE
        results.append((path, status, report))
        if not args.json:
            _say(report.text())
            if args.map:
                _say(report.memory_map())
            if args.trace:
                _say(trace_text(report))
    svg_error = write_svg(args.map_svg, reports) if args.map_svg else None
    if svg_error:
        _say(f"tlx-verify: error: {svg_error}", sys.stderr)
    statuses = {status for _, status, _ in results} | ({UNREADABLE} if svg_error else set())
    worst = next((s for s in PRIORITY if s in statuses), SAFE)
    code = 0 if worst == UNPROVEN and args.allow_unproven else EXIT[worst]
    if args.json:
        _say(json.dumps([_json(*r) for r in results], indent=2))
        return code
    for path, status, _ in results:
        _say(f"tlx-verify: {status:<10} {path}")
    counts = ", ".join(f"{sum(r[1] == s for r in results)} {s.lower()}" for s in PRIORITY)
    unwritten = f" (--map-svg {args.map_svg} not written)" if svg_error else ""
    _say(f"tlx-verify: {len(results)} input{'s' * (len(results) != 1)}: {counts} -> exit {code}{unwritten}")
    return code


def parse_target(text: str) -> int:
    """The compute capability of `sm_90a`, `sm_100`, `cuda:100` or `100`; ValueError for anything else,
    or for a capability whose memory limits the proof does not know (its P6 needs them)."""
    try:
        capability = targets.capability(text)
    except ValueError:
        capability = None
    if capability not in targets.SMEM_BYTES:
        known = ", ".join(str(c) for c in sorted(targets.SMEM_BYTES))
        raise ValueError(f"--target {text!r} is not a target tlx-verify knows: give sm_<N>, sm_<N>a, cuda:<N> "
                         f"or <N>, with N one of {known} (e.g. --target sm_100a)")
    return capability


def expand(paths):
    """(path, None) per input file, a directory giving each `.ttgir` under it in sorted order;
    (path, message) for a directory with none, or one that cannot be listed."""
    for path in paths:
        if not os.path.isdir(path):
            yield path, None
            continue
        errors = []
        found = sorted(os.path.join(d, f) for d, _, files in os.walk(path, onerror=errors.append)
                       for f in files if f.endswith(".ttgir"))
        yield from ((e.filename, f"{e.filename}: cannot read directory: {e.strerror}") for e in errors)
        if not found and not errors:
            yield path, (f"{path}: no .ttgir file in this directory or below it: give a Triton cache or "
                         "TRITON_KERNEL_DUMP directory, or the files themselves")
        yield from ((f, None) for f in found)


def write_svg(path: str, reports) -> str | None:
    """Write the memory maps of `reports`; the error message if that cannot be done (no partial file left)."""
    if not reports:
        return f"--map-svg {path}: not written: no input could be checked"
    text, f = _join_svg(reports), None
    try:
        f = open(path, "w", encoding="utf-8")
        with f:
            f.write(text)
    except OSError as exc:
        if f is not None:
            os.remove(path)
        return f"--map-svg {path}: cannot write: {exc.strerror} (the directory must exist and be writable)"
    return None


def _json(path, status, what) -> dict:
    if status == UNREADABLE:
        return {"path": path, "status": status.lower(), "ok": False, "error": what}
    return {**what.to_dict(), "status": status.lower()}


def _say(text: str, stream=None) -> None:
    """print and flush; once a pipe's reader is gone (`| head`), the rest of that stream goes to /dev/null,
    so the remaining inputs are still checked and the exit status is that of all of them."""
    stream = stream or sys.stdout
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _join_svg(reports) -> str:
    if len(reports) == 1:
        return reports[0].svg()
    # stack the pictures of several inputs vertically
    parts, y, width = [], 0, 0
    for r in reports:
        svg = r.svg()
        w, h = (int(x) for x in re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
        inner = svg.split(">", 1)[1].rsplit("</svg>", 1)[0]
        parts.append(f'<g transform="translate(0,{y})">{inner}</g>')
        y, width = y + h, max(width, w)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" font-family="monospace" '
            f'font-size="12">\n' + "\n".join(parts) + "\n</svg>\n")


if __name__ == "__main__":
    sys.exit(main())
