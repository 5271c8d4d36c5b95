"""What the plugin costs at compile time, per kernel in kernels/ (python benchmarks/compile_overhead.py).

Each kernel is built once at its default configuration through its own compile helper (which returns the
`GluonASTSource` and options it compiled), then compiled again `--repeat` times with the hook installed
and with it uninstalled, interleaved, so that load on a shared machine hits both columns alike. Without
the hook a tagged kernel still compiles (its tags are ignored and every allocation is separate), so both
columns compile the same source. The plugin's own time comes from `hook.last_round_trip` of each run:
bridge out (the hook's tag check, then `to_upstream`: printouts, parse, locations), passes, bridge back
(`to_triton`), proof (P1-P6/P8 and P7 apart; on its own thread while Triton generates code) and how long
the compile then waited for the proof. "work" is all of the plugin's time, the proof's included (what it
costs where every core is busy compiling); "on the path" is what the compile spent in it (work less the
proof's time that overlapped Triton's later stages). Times are medians; a "share" is the median over runs
of that time / compile time with the plugin, both measured in the same compile, which is what to compare
between machines and runs. "added" is what a user waits for in all: the median of (with - without) over the interleaved
pairs, as a share of the compile with the plugin; beyond the plugin's own time it holds what Triton's later
stages spend more on the lowered kernel than on the unshared one (Membar and the proxy-fence pass on 3.9). It is
"n/a" where the unshared kernel is no baseline (TMEM past the SM's columns: Triton compiles it to a trap).

`--proof-thread-ab` measures what running the proof beside code generation buys: each kernel compiled with the
proof on its own thread (the default), with it inside the `ttgir` stage (a stages hook over the plugin's that
replaces the last stage, which makes the plugin wait for the proof at `ttgir`), and without the plugin,
interleaved; medians of the whole compile.

`--triton-passes` says where "added in all" goes: each kernel compiled with the plugin and without it, interleaved,
with MLIR's pass timing on (`MLIR_ENABLE_TIMING=1`, read by every pass manager Triton makes), and the wall time of
each of Triton's own passes summed over the compile; medians per pass, the passes that added the most listed.

`--dump-ttgir DIR` writes each kernel's TTGIR as Triton's `ttgir` stage leaves it, lowered and unshared; `--ttgir FILE
...` compiles such files (edited by hand: another lowering form, tried before it is built) from that stage on without
the plugin, interleaved, and times Triton's passes as `--triton-passes` does: what a form of the views costs Triton.
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import contextlib
import re
import statistics
import tempfile
import time

import triton
from triton import knobs

from tlx_alias.kernels import (blackwell_attention, blackwell_gemm, demo, hopper_attention, hopper_attention_ws,
                               hopper_gemm, hopper_gemm_ws)
from tlx_alias.kernels._common import BLACKWELL, compile_for
from tlx_alias import _triton, targets
from tlx_alias.plugin import hook

GOAL = 5.0  # % of compile time (issue 13)


def _cases():
    """(name, build): one per kernel in kernels/, each at the configuration its compile helper defaults to."""
    return [
        ("hopper_gemm", hopper_gemm.compile_gemm),
        ("hopper_gemm_ws", hopper_gemm_ws.compile_gemm_ws),
        ("hopper_attention", hopper_attention.compile_attention),
        ("hopper_attention_ws", hopper_attention_ws.compile_attention),
        ("blackwell_attention", blackwell_attention.compile_attention),
        ("blackwell_gemm", blackwell_gemm.compile_matmul),
        ("demo (seed 000 TMEM tree)", lambda: compile_for(demo.fa_tmem_demo_kernel, {"out_ptr": "*fp32"},
                                                          {"BM": 128, "BN": 128, "S": 2, "NUM": 2}, BLACKWELL)),
    ]


def _compile(compiled) -> tuple:
    """(ms, the compiled kernel)."""
    t0 = time.perf_counter()
    kernel = triton.compile(compiled.source, target=compiled.target, options=compiled.options)
    return (time.perf_counter() - t0) * 1e3, kernel


def _no_baseline(kernel) -> str | None:
    """Why a kernel compiled without the plugin is no baseline, or None. Unshared TMEM past the SM's columns
    compiles (Triton 3.6-3.9 raise nothing) into a kernel whose body is a trap: its later stages have nothing
    to do, so "added" would count the whole code generation of the real kernel."""
    cols = getattr(kernel.metadata, "tmem_size", 0) or 0
    if cols > targets.TMEM_COLUMNS:
        return f"unshared it needs {cols} TMEM columns > {targets.TMEM_COLUMNS}: Triton compiles it to a trap"
    return None


def measure(build, repeat: int) -> dict:
    """Medians (ms) of compile with/without the plugin and of each part of the plugin's own time."""
    hook.install()
    hook.last_round_trip.clear()
    compiled = build()  # also the warm-up: imports, contexts, the kernel's first trace
    if not hook.last_round_trip:
        raise RuntimeError("the plugin did not run on this kernel (no tlx tags?): nothing to measure")
    rows = []
    for _ in range(repeat):
        hook.install()
        hook.last_round_trip.clear()
        on, _ = _compile(compiled)
        rt = dict(hook.last_round_trip)
        if not rt:
            raise RuntimeError("the plugin did not run on a compile with the hook installed")
        hook.uninstall()
        with hook.unlowered():   # the same kernel, its tagged allocations plain: the unshared baseline
            off, unshared = _compile(compiled)
        no_baseline = _no_baseline(unshared)
        rows.append({"on": on, "off": off, "to_upstream": rt["tags_ms"] + rt["to_upstream_ms"],
                     "to_triton": rt["to_triton_ms"], "passes": rt["lower_ms"],
                     "proof": rt["proof_ms"] - rt["p7_ms"], "p7": rt["p7_ms"], "wait": rt["wait_ms"],
                     "work": rt["work_ms"], "work_share": 100 * rt["work_ms"] / on,
                     "plugin": rt["total_ms"], "share": 100 * rt["total_ms"] / on,
                     "added": on - off, "added_share": 100 * (on - off) / on})
    hook.install()
    out = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    out["target"] = compiled.target_name
    out["no_baseline"] = no_baseline
    return out


def proof_thread_ab(build, repeat: int) -> dict:
    """Medians (ms) of whole compiles: proof beside code generation, proof inside `ttgir`, no plugin; and of the
    proof's own CPU time."""
    hook.install()
    compiled = build()
    ours = _triton.get_stages_hook()

    def last_stage_replaced(backend, stages, options, language, capability):
        ours(backend, stages, options, language, capability)
        last = list(stages)[-1]
        stages[last] = lambda src, metadata, run=stages[last]: run(src, metadata)
    inline = _triton.stages_hook(last_stage_replaced, "proof-inside-ttgir")
    rows = {"beside": [], "inside": [], "off": [], "proof": []}
    try:
        for _ in range(repeat):
            for mode in ("beside", "inside", "off"):
                if mode == "off":
                    hook.uninstall()
                else:
                    hook.install()
                    _triton.set_stages_hook(inline if mode == "inside" else ours)
                with hook.unlowered() if mode == "off" else contextlib.nullcontext():
                    rows[mode].append(_compile(compiled)[0])
                if mode == "beside":
                    rows["proof"].append(hook.last_round_trip["proof_ms"])
                _triton.set_stages_hook(ours)
    finally:
        _triton.set_stages_hook(ours)
        hook.install()
    return {k: statistics.median(v) for k, v in rows.items()}


_PASS_TIME = re.compile(r"^ {4}(\d+\.\d+) \(\s*[\d.]+%\)  (\S.*)$", re.M)   # a top-level pass's row


def _pass_times(report: str) -> dict:
    """{pass: seconds} summed over every execution time report MLIR printed (one per pass manager), the rows of
    passes themselves (not the nested analyses, not "Rest" and "Total")."""
    out = collections.Counter()
    for seconds, name in _PASS_TIME.findall(report):
        if name not in ("Rest", "Total"):
            out[name] += float(seconds)
    return out


def triton_passes(build, repeat: int) -> dict:
    """Medians (ms) of each of Triton's passes over interleaved compiles with and without the plugin, and of
    their sum; the baseline's reason for being none ("n/a" as in the main table)."""
    hook.install()
    compiled = build()
    runs, unshared = {"with": [], "without": []}, None
    os.environ["MLIR_ENABLE_TIMING"] = "1"
    try:
        for _ in range(repeat):
            for mode in ("with", "without"):
                if mode == "without":
                    hook.uninstall()
                with hook.unlowered() if mode == "without" else contextlib.nullcontext(), \
                        _triton.captured_stderr() as err:
                    kernel = _compile(compiled)[1]
                    runs[mode].append(_pass_times(err()))
                if mode == "without":
                    unshared = kernel
                hook.install()
    finally:
        del os.environ["MLIR_ENABLE_TIMING"]
    names = {n for r in runs["with"] + runs["without"] for n in r}
    out = {mode: {n: 1e3 * statistics.median(r.get(n, 0.0) for r in rs) for n in names} for mode, rs in runs.items()}
    out["total"] = {mode: 1e3 * statistics.median(sum(r.values()) for r in rs) for mode, rs in runs.items()}
    out["no_baseline"] = _no_baseline(unshared)
    return out


def dump_ttgir(cases, directory):
    """<kernel>.lowered.ttgir and <kernel>.unshared.ttgir for each case: the module Triton's `ttgir` stage returns."""
    os.makedirs(directory, exist_ok=True)
    for name, build in cases:
        hook.install()
        compiled, slug = build(), name.split()[0]
        with knobs.compilation.scope():
            knobs.compilation.always_compile = True
            lowered = _compile(compiled)[1]
            hook.uninstall()
            try:
                with hook.unlowered():
                    unshared = _compile(compiled)[1]
            finally:
                hook.install()
        for kind, kernel in (("lowered", lowered), ("unshared", unshared)):
            path = os.path.join(directory, f"{slug}.{kind}.ttgir")
            with open(path, "w") as f:
                f.write(kernel.asm["ttgir"])
            print(path)


_TARGET = re.compile(r'ttg\.target = "cuda:(\d+)"')


def ttgir_passes(paths, repeat: int) -> dict:
    """{path: {pass: median ms}} of Triton's passes compiling each TTGIR file from the `ttgir` stage on (the target
    its module names), the plugin uninstalled, the files interleaved; "total": the median of their sum."""
    from triton.backends.compiler import GPUTarget
    targets_of = {}
    for path in paths:
        try:
            with open(path) as f:
                m = _TARGET.search(f.read())
        except OSError as exc:
            raise SystemExit(f"{path}: {exc.strerror}") from None
        if m is None:
            raise SystemExit(f"{path}: no `ttg.target = \"cuda:NN\"` module attribute (dump it with --dump-ttgir)")
        targets_of[path] = GPUTarget("cuda", int(m.group(1)), 32)
    runs = {path: [] for path in paths}
    hook.uninstall()
    os.environ["MLIR_ENABLE_TIMING"] = "1"
    try:
        with knobs.compilation.scope():
            knobs.compilation.always_compile = True
            for _ in range(repeat):
                for path in paths:
                    with _triton.captured_stderr() as err:
                        try:
                            triton.compile(path, target=targets_of[path])
                        except Exception as exc:   # a hand edit Triton rejects: say where, not only that it did
                            errors = [line for line in err().splitlines() if "error" in line]
                            raise SystemExit(f"{path}: {exc}\n" + "\n".join(errors)) from None
                        runs[path].append(_pass_times(err()))
    finally:
        del os.environ["MLIR_ENABLE_TIMING"]
        hook.install()
    out = {}
    for path, rs in runs.items():
        names = {n for r in rs for n in r}
        out[path] = {n: 1e3 * statistics.median(r.get(n, 0.0) for r in rs) for n in names}
        out[path]["total"] = 1e3 * statistics.median(sum(r.values()) for r in rs)
    return out


def _added_passes(m, top=4) -> str:
    grew = sorted(m["with"], key=lambda n: m["without"][n] - m["with"][n])[:top]
    return "; ".join(f"{n} {m['with'][n]:.0f} / {m['without'][n]:.0f}" for n in grew)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="compiles per column and kernel (default 5)")
    ap.add_argument("--only", nargs="*", help="kernel names to measure (default: all)")
    ap.add_argument("--no-row-windows", action="store_true",
                    help="lower as before row windows (every SMEM view from the spec's start; Triton 3.9's default "
                         "is windows): what they save in Triton's later stages")
    ap.add_argument("--proof-thread-ab", action="store_true",
                    help="compile with the proof beside code generation, inside the ttgir stage and without the "
                         "plugin, interleaved (see the module doc)")
    ap.add_argument("--triton-passes", action="store_true",
                    help="the time of each of Triton's own passes with the plugin and without it (see the module "
                         "doc): where \"added in all\" goes")
    ap.add_argument("--dump-ttgir", metavar="DIR",
                    help="write each kernel's TTGIR as the ttgir stage leaves it, lowered and unshared, into DIR")
    ap.add_argument("--ttgir", nargs="+", metavar="FILE",
                    help="time Triton's passes compiling these TTGIR files from the ttgir stage on, without the "
                         "plugin, interleaved (see the module doc)")
    args = ap.parse_args(argv)
    if args.no_row_windows:
        from tlx_alias import _triton
        _triton.SUBSLICE_ANY_SHAPE = False   # read by hook.lower at each compile
    with tempfile.TemporaryDirectory(prefix="tlx_overhead_") as cache:   # Triton's cache, removed afterwards
        os.environ["TRITON_CACHE_DIR"] = cache
        _run(args)


def _run(args):
    cases = _cases()
    if args.only:
        unknown = set(args.only) - {name for name, _ in cases}
        if unknown:
            raise SystemExit(f"unknown kernel(s) {sorted(unknown)}; choose from {[n for n, _ in cases]}")
        cases = [c for c in cases if c[0] in args.only]
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"triton {triton.__version__}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
          f"({usable} usable), median of {args.repeat} interleaved compiles per column; times in ms")
    if args.dump_ttgir:
        dump_ttgir(cases, args.dump_ttgir)
        return
    if args.ttgir:
        times = ttgir_passes(args.ttgir, args.repeat)
        print("| TTGIR file | Triton's passes | the largest passes |")
        print("|---|---|---|")
        for path, m in times.items():
            top = sorted((n for n in m if n != "total"), key=m.get, reverse=True)[:4]
            print(f"| {os.path.basename(path)} | {m['total']:.0f} | " + "; ".join(f"{n} {m[n]:.0f}" for n in top) + " |")
        return
    if args.proof_thread_ab:
        _table(cases, args.repeat, proof_thread_ab,
               ["proof beside code generation", "proof inside ttgir", "without plugin", "saved",
                "the proof's CPU time"],
               lambda m: [f"{m['beside']:.0f}", f"{m['inside']:.0f}", f"{m['off']:.0f}",
                          f"{m['inside'] - m['beside']:.0f}", f"{m['proof']:.1f}"])
        return
    if args.triton_passes:
        _table(cases, args.repeat, triton_passes,
               ["Triton's passes with plugin", "without", "added", "the passes that added most (with / without)"],
               lambda m: [f"{m['total']['with']:.0f}", f"{m['total']['without']:.0f}",
                          f"n/a ({m['no_baseline']})" if m["no_baseline"]
                          else f"{m['total']['with'] - m['total']['without']:.0f}", _added_passes(m)])
        return
    _table(cases, args.repeat, measure,
           ["target", "compile with plugin", "without", "bridge to_upstream", "passes", "bridge to_triton",
            "proof P1-P6/P8", "proof P7", "waited for the proof", "plugin work (share)", "plugin on the path",
            "its share of compile", "added in all (share)"],
           lambda m: [m["target"], f"{m['on']:.0f}", f"{m['off']:.0f}", f"{m['to_upstream']:.1f}",
                      f"{m['passes']:.1f}", f"{m['to_triton']:.1f}", f"{m['proof']:.1f}", f"{m['p7']:.1f}",
                      f"{m['wait']:.1f}", f"{m['work']:.1f} ({m['work_share']:.1f}%{_over(m['work_share'])})",
                      f"{m['plugin']:.1f}", f"{m['share']:.1f}%{_over(m['share'])}",
                      f"n/a ({m['no_baseline']})" if m["no_baseline"]
                      else f"{m['added']:.0f} ({m['added_share']:.0f}%)"])


def _table(cases, repeat, measure_one, header, row):
    """One markdown row per kernel: `row` of what `measure_one(build, repeat)` returns, compiled uncached."""
    print("| kernel | " + " | ".join(header) + " |")
    print("|---|" + "---|" * len(header))
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        for name, build in cases:
            print(f"| {name} | " + " | ".join(row(measure_one(build, repeat))) + " |", flush=True)


def _over(share) -> str:
    return "" if share <= GOAL else " over 5%"


if __name__ == "__main__":
    main()
