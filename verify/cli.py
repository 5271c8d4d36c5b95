"""tlx-verify: Z3 safety proof of SMEM/TMEM aliasing over dumped IR.

    tlx-verify PATH... [--target cuda:100] [--json] [--map] [--map-svg FILE] [--strict]

PATH: Triton's own dumps (`.ttgir` custom assembly from the Triton cache or TRITON_KERNEL_DUMP) or
generic-form `.mlir`. Prints one verdict line per allocation and property, then a summary.
Exit status: 0 proven safe (checks the solver cannot settle are warnings), 1 a violation (or, with
--strict, an unsettled check), 2 an unreadable input.
"""
import argparse
import json
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tlx-verify", description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", metavar="PATH", help=".ttgir (Triton custom form) or generic .mlir")
    p.add_argument("--target", help="cuda:90, cuda:100 ... (default: the module's ttg.target)")
    p.add_argument("--json", action="store_true", help="one JSON document with every report")
    p.add_argument("--map", action="store_true", help="print each allocation's memory map per buffer index")
    p.add_argument("--map-svg", metavar="FILE", help="write the memory maps as an SVG picture")
    p.add_argument("--strict", action="store_true", help="checks the solver cannot settle fail too")
    args = p.parse_args(argv)

    from tlx_alias.verify import prove_module
    from tlx_alias.verify.source import InputError, load

    reports, status = [], 0
    for path in args.paths:
        try:
            loaded = load(path)
            with loaded.context:
                report = prove_module(loaded.module, args.target, loaded.aliases, path)
        except InputError as exc:
            print(f"tlx-verify: error: {exc}", file=sys.stderr)
            status = max(status, 2)
            continue
        report.notes[:0] = loaded.notes
        reports.append(report)
        if report.violations or (args.strict and report.unknowns):
            status = max(status, 1)
        if not args.json:
            print(report.text())
            if args.map:
                print(report.memory_map())
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], indent=2))
    if args.map_svg and reports:
        with open(args.map_svg, "w") as f:
            f.write(_join_svg(reports))
    return status


def _join_svg(reports) -> str:
    if len(reports) == 1:
        return reports[0].svg()
    # stack the pictures of several inputs vertically
    import re
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
