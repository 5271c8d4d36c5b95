"""What the proof found, for people (verdict lines, memory maps, SVG) and for tools (JSON)."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import z3

from .props import NA, PROVEN, RANK, UNKNOWN, VIOLATION

MAP_WIDTH = 64


@dataclass
class BufferMap:
    """One row of a memory map: a view's buffers, or a descriptor derived from each buffer of a view."""
    name: str
    desc: str                        # type and provenance
    src: str
    buffers: list                    # [(label, lo, hi)]
    exact: bool = True


@dataclass
class AllocMap:
    name: str
    space: str
    unit: str
    size: int
    src: str
    kernel: str
    rows: list = field(default_factory=list)


@dataclass
class Report:
    target: str
    capability: int | None
    kernels: list
    verdicts: list
    maps: list
    notes: list = field(default_factory=list)
    ms: float = 0.0                  # CPU time of the proving thread (wall time counts whatever shares its core)
    solver_calls: int = 0
    path: str = ""
    resource_units: int = 0          # Z3's deterministic work count, summed over the kernels' checks
    p7_ms: float = 0.0               # of `ms`: the temporal proof (P7, verify/temporal.py)
    context_ms: float = 0.0          # not in `ms`: CPU time another thread spent making its Z3 context, ahead

    # -- verdicts
    @property
    def violations(self):
        return [v for v in self.verdicts if v.status == VIOLATION]

    @property
    def unknowns(self):
        return [v for v in self.verdicts if v.status == UNKNOWN]

    @property
    def blocking(self):
        """The "cannot prove" verdicts that fail a compile by default: all but capacity (P6), which
        Triton's allocator may still resolve by liveness, and time (P7), a bounded run that could not
        follow the kernel (see `tlx_alias.verify.enforce`); both stop the compile under `strict`."""
        return [v for v in self.unknowns if v.prop not in ("P6", "P7")]

    @property
    def ok(self) -> bool:
        """No violation ("cannot prove" is reported apart: `unknowns`, `blocking`, `proven`)."""
        return not self.violations

    @property
    def proven(self) -> bool:
        """Every check settled and none violated: what "SAFE" means."""
        return not self.violations and not self.unknowns

    def grouped(self):
        """[(alloc, prop, status, [verdicts])] in first-seen order: one entry per allocation and property."""
        groups = {}
        for v in self.verdicts:
            groups.setdefault((v.alloc, v.prop), []).append(v)
        out = []
        for (alloc, prop), vs in groups.items():
            status = max((v.status for v in vs), key=RANK.get)
            out.append((alloc, prop, status, vs))
        return sorted(out, key=lambda g: (g[0] == "(all)", [a for a, _ in groups].index(g[0]), g[1]))

    def lines(self) -> list:
        out = []
        for alloc, prop, status, vs in self.grouped():
            bad = [v for v in vs if v.status == status and status in (VIOLATION, UNKNOWN)]
            if bad:
                out.append(f"  {prop} {alloc}: {status.upper()}: {bad[0].detail}")
                out += [f"      also: {v.detail}" for v in bad[1:4]]
                if len(bad) > 4:
                    out.append(f"      ... {len(bad) - 4} more")
                if bad[0].fix:
                    out.append(f"      fix: {bad[0].fix}")
                out += [f"      query:\n{v.query}" for v in bad if v.query]
            elif status == NA:
                out.append(f"  {prop} {alloc}: n/a: {vs[0].detail}")
            else:
                n = sum(v.status == PROVEN for v in vs)
                checks = vs[0].check if n == 1 else f"{n} checks"
                out.append(f"  {prop} {alloc}: proven: {checks}")
        return out

    def summary(self) -> str:
        groups = self.grouped()
        count = {s: sum(g[2] == s for g in groups) for s in (PROVEN, VIOLATION, UNKNOWN, NA)}
        verdict = "VIOLATION" if count[VIOLATION] else ("CANNOT PROVE" if count[UNKNOWN] else "SAFE")
        n_alloc = len({m.name for m in self.maps} | {v.alloc for v in self.verdicts if v.alloc != "(all)"})
        return (f"summary: {n_alloc} allocation{'s' * (n_alloc != 1)}, {len(groups)} verdicts: {count[PROVEN]} proven, "
                f"{count[VIOLATION]} violated, {count[UNKNOWN]} cannot prove, {count[NA]} n/a -> {verdict} "
                f"({self.ms:.1f} ms, {self.solver_calls} solver calls{f'; P7 {self.p7_ms:.1f} ms' if self.p7_ms else ''})")

    def text(self) -> str:
        head = f"{self.path or '<module>'}: {', '.join(self.kernels) or 'no kernel'} ({self.target})"
        body = [head] + self.lines() + [f"  note: {n}" for n in self.notes] + [self.summary()]
        return "\n".join(body)

    def to_dict(self) -> dict:
        return {
            "path": self.path, "target": self.target, "kernels": self.kernels, "ok": self.ok,
            "ms": round(self.ms, 2), "p7_ms": round(self.p7_ms, 2), "solver_calls": self.solver_calls,
            "notes": self.notes,
            "verdicts": [v.as_dict() for v in self.verdicts],
            "allocations": [{"name": m.name, "space": m.space, "size": m.size, "unit": m.unit, "src": m.src,
                             "kernel": m.kernel,
                             "views": [{"name": r.name, "type": r.desc, "src": r.src, "exact": r.exact,
                                        "buffers": [{"index": b[0], "range": [b[1], b[2]]} for b in r.buffers]}
                                       for r in m.rows]} for m in self.maps],
        }

    # -- memory maps
    def memory_map(self) -> str:
        out = []
        for m in self.maps:
            out.append(f"{m.name}: {m.space.upper()}, {m.size} {m.unit} ({m.src or '?'}; kernel {m.kernel})")
            pad = max([len(r.name) for r in m.rows] + [4]) + 2
            axis = f"{0:<{MAP_WIDTH // 2}}{m.size // 2:<{MAP_WIDTH - MAP_WIDTH // 2}}{m.size}"
            out.append(" " * (pad + 2) + axis)
            for r in m.rows:
                out.append(f"  {r.name:<{pad}}|{_bar(r.buffers, m.size)}|")
            for r in m.rows:
                ranges = " ".join(f"[{b[0]}]={b[1]}..{b[2]}" for b in r.buffers[:16])
                more = f" ... ({len(r.buffers)} buffers)" if len(r.buffers) > 16 else ""
                approx = " (footprint over-approximated)" if not r.exact else ""
                out.append(f"    {r.name}: {r.desc}, {r.src or '?'}: {ranges}{more}{approx}")
            out.append("")
        return "\n".join(out)

    def svg(self) -> str:
        row_h, left, width = 22, 150, 720
        y, parts = 10, []
        palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"]
        bad = {(n, i) for v in self.violations for n, i in zip(v.data.get("views", [v.data.get("view")]),
                                                               v.data.get("indices", [v.data.get("index")]))}
        for m in self.maps:
            parts.append(f'<text x="4" y="{y + 14}" font-weight="bold">{html.escape(m.name)}: '
                         f'{m.space.upper()} {m.size} {m.unit} ({html.escape(m.src or "?")})</text>')
            y += row_h
            parts.append(f'<rect x="{left}" y="{y}" width="{width}" height="{row_h * len(m.rows)}" fill="none" '
                         f'stroke="#999"/>')
            for k, r in enumerate(m.rows):
                color = palette[k % len(palette)]
                parts.append(f'<text x="4" y="{y + 15}">{html.escape(r.name)}</text>')
                for label, lo, hi in r.buffers:
                    x0 = left + width * lo / max(m.size, 1)
                    w = max(width * (hi - lo) / max(m.size, 1), 1)
                    stroke = "red" if (r.name, label) in bad else "white"
                    parts.append(f'<rect x="{x0:.1f}" y="{y + 2}" width="{w:.1f}" height="{row_h - 4}" '
                                 f'fill="{color}" fill-opacity="{0.85 if r.exact else 0.35}" stroke="{stroke}">'
                                 f'<title>{html.escape(r.name)}[{label}] {lo}..{hi} {m.unit}</title></rect>')
                    if w > 14:
                        parts.append(f'<text x="{x0 + 3:.1f}" y="{y + 15}" font-size="11" fill="white">'
                                     f'{label}</text>')
                y += row_h
            parts.append(f'<text x="{left}" y="{y + 14}" font-size="11">0</text>'
                         f'<text x="{left + width - 30}" y="{y + 14}" font-size="11">{m.size}</text>')
            y += row_h + 8
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{y + 10}" '
                f'font-family="monospace" font-size="12">\n' + "\n".join(parts) + "\n</svg>\n")


def _bar(buffers, size) -> str:
    cells = [" "] * MAP_WIDTH
    for label, lo, hi in buffers:
        a = min(int(lo * MAP_WIDTH / max(size, 1)), MAP_WIDTH - 1)
        b = max(min(-(-hi * MAP_WIDTH // max(size, 1)), MAP_WIDTH), a + 1)
        for c in range(a, b):
            cells[c] = "="
        text = str(label)
        cells[a] = "["
        for k, ch in enumerate(text):
            if a + 1 + k < b:
                cells[a + 1 + k] = ch
    return "".join(cells)


# ---------------------------------------------------------------------------------------------- from a model

MAX_DRAWN = 256


def alloc_maps(kernel) -> list:
    out = []
    for a in kernel.allocs:
        m = AllocMap(a.name, a.space, a.unit, a.size, a.src, kernel.name)
        for v in a.views:
            if v.backing:
                continue
            bufs = [(i, v.lo(i), v.lo(i) + v.size) for i in range(min(v.num, MAX_DRAWN))]
            kind = f"tlx.view group={v.tlx.group}" if v.tlx else ("indexed" if v.indexed else "used whole")
            m.rows.append(BufferMap(v.name, f"{v.md.short()} at +{v.offset}, {v.num} x {v.size} {a.unit}, {kind}",
                                    v.src, bufs, v.exact))
        for s in a.subs:
            rel = z3.simplify(s.rel) if not isinstance(s.rel, int) else s.rel
            rel = rel.as_long() if z3.is_int_value(rel) else (rel if isinstance(rel, int) else None)
            if rel is None:
                continue
            v = s.view
            bufs = [(i, v.slot_lo(i) + rel, v.slot_lo(i) + rel + s.extent) for i in range(min(v.num, MAX_DRAWN))]
            row = BufferMap(s.name, f"{s.md.short()} at +{rel} in each {v.name}[i]", s.src, bufs, s.exact)
            if all((r.name, r.buffers) != (row.name, row.buffers) for r in m.rows):
                m.rows.append(row)
        out.append(m)
    return out
