"""Proof time per kernel, as a table (a benchmark, not a test): `python benchmarks/proof_timing.py`.

Each module is proven once to warm up, then `--runs` times; the table gives the median and the largest
wall time of one `prove_module` call (model + every solver check; each proof builds its own Z3 context,
see `tlx_alias.verify._z3_context`), the part of it spent in P7 (median), the solver calls and Z3's resource units (deterministic). Modules:
seed 000's FA layout, the hand-aliased kernels of test/lit/verify/Inputs/make_inputs.py (compiled here),
and the lowered IR of the kernels in `tlx_alias.kernels`, compiled here through the plugin (no GPU needed).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from tlx_alias.verify import prove_module
from tlx_alias.verify.source import load_generic, load_triton

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "test", "lit", "verify", "Inputs"), os.path.join(ROOT, "test", "tools")]
import make_inputs  # noqa: E402
import synth  # noqa: E402


def _hand_kernels():
    """The hand-aliased kernels expected to verify clean, compiled now with the installed Triton."""
    for name in sorted(make_inputs.KERNELS):
        if name.endswith("_ok") and not make_inputs.rejected_by_this_triton(name):
            yield name, load_triton(make_inputs.compile_ttgir(name), name + ".ttgir")


def _lowered_kernels():
    """(name, (module, target, aliases)) of each real kernel's lowered IR, taken where the plugin proves it."""
    from tlx_alias.kernels import (blackwell_attention, blackwell_gemm, hopper_attention, hopper_attention_ws,
                                   hopper_gemm, hopper_gemm_ws)
    from tlx_alias.plugin import hook
    seen = []
    orig, cache = hook.prove, os.environ.get("TRITON_CACHE_DIR")
    # a private Triton cache, so that every kernel is compiled (and its lowered IR seen) in this run
    tmp = tempfile.TemporaryDirectory(prefix="tlx-alias-timing-")
    os.environ["TRITON_CACHE_DIR"] = tmp.name

    def prove_and_keep(module, target, aliases):
        seen.append((module, target, aliases))
        return orig(module, target, aliases)

    hook.prove = prove_and_keep
    try:
        for name, build in [("hopper_gemm 128x256x64 4 stages", hopper_gemm.compile_gemm),
                            ("hopper_gemm_ws 128x256x64 4 stages", hopper_gemm_ws.compile_gemm_ws),
                            ("hopper_attention D=128 3 stages", lambda: hopper_attention.compile_attention(kv_stages=3)),
                            ("hopper_attention_ws D=128 3 stages", hopper_attention_ws.compile_attention),
                            ("blackwell_attention D=128", blackwell_attention.compile_attention),
                            ("blackwell_gemm 6 stages", lambda: blackwell_gemm.compile_matmul(stages=6))]:
            seen.clear()
            build()
            if seen:  # empty when the Triton cache already held the kernel
                yield name, seen[-1]
    finally:
        hook.prove = orig
        tmp.cleanup()
        if cache is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = cache


def measure(runs: int = 7, kernels: bool = True) -> list:
    cases = [("seed 000 FA TMEM layout", load_generic(synth.module_text(synth.seed000_fa()), "seed000.mlir"))]
    cases += list(_hand_kernels())
    rows = []
    for name, loaded in cases:
        with loaded.context:
            rows.append(_time(name, lambda: prove_module(loaded.module, None, loaded.aliases), runs))
    for name, (module, target, aliases) in _lowered_kernels() if kernels else ():
        rows.append(_time(name, lambda: prove_module(module, target, aliases), runs))
    return rows


def _time(name, prove, runs):
    report = prove()
    times, p7 = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        p7.append(prove().p7_ms)
        times.append((time.perf_counter() - t0) * 1e3)
    return (name, statistics.median(times), max(times), statistics.median(p7), report.solver_calls,
            report.resource_units,
            "SAFE" if report.ok and not report.unknowns else ("cannot prove" if report.ok else "VIOLATION"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/proof_timing.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--no-kernels", action="store_true", help="skip compiling the kernels of tlx_alias.kernels")
    args = p.parse_args(argv)
    rows = measure(args.runs, kernels=not args.no_kernels)
    print(f"{'module':<36} {'median ms':>10} {'max ms':>8} {'P7 ms':>7} {'solver calls':>13} {'Z3 units (props)':>17}"
          "  verdict")
    for name, med, worst, p7, calls, units, verdict in rows:
        print(f"{name:<36} {med:>10.1f} {worst:>8.1f} {p7:>7.1f} {calls:>13} {units:>17}  {verdict}")
    meds = [r[1] for r in rows]
    print(f"\nmedian over modules {statistics.median(meds):.1f} ms; largest {max(meds):.1f} ms ({rows[meds.index(max(meds))][0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
