"""What the plugin costs at compile time, measured in one run (python benchmarks/compile_overhead.py).

For each kernel: median wall time of `triton.compile` (always_compile, fresh cache) with the hook
installed and with it uninstalled, and the plugin's own share (bridge + passes) from `hook.last_round_trip`.
Without the hook a tagged kernel still compiles (its tags are ignored and every allocation is separate),
so both columns compile the same source.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource

from tlx_alias.plugin import hook


def _cases():
    from tlx_alias.kernels.demo import fa_tmem_demo_kernel
    cases = [("seed000 FA TMEM tree (sm_100a)", fa_tmem_demo_kernel, {"out_ptr": "*fp32"},
              {"BM": 128, "BN": 128, "S": 2, "NUM": 2}, 100)]
    try:
        from tlx_alias.kernels import hopper_gemm
        cases.append(("hopper_gemm 128x256x64 4 stages (sm_90a)", *hopper_gemm.overhead_case(), 90))
    except (ImportError, AttributeError):
        pass
    from tlx_alias.kernels import hopper_attention_ws
    cases.append(("hopper_attention_ws D=128 3 stages (sm_90a)", *hopper_attention_ws.overhead_case(), 90))
    return cases


def _time(fn, sig, consts, cc, repeat):
    sig = dict(sig, **{k: "constexpr" for k in consts})
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        triton.compile(GluonASTSource(fn, sig, consts), target=GPUTarget("cuda", cc, 32))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tlx_overhead_")
    print(f"{'kernel':42} {'with plugin':>12} {'without':>10} {'ratio':>6} {'plugin share':>13}")
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        for name, fn, sig, consts, cc in _cases():
            hook.install()
            _time(fn, sig, consts, cc, 1)                       # warm imports and contexts
            on = _time(fn, sig, consts, cc, args.repeat)
            share = hook.last_round_trip.get("total_ms", float("nan"))
            hook.uninstall()
            _time(fn, sig, consts, cc, 1)
            off = _time(fn, sig, consts, cc, args.repeat)
            print(f"{name:42} {on * 1e3:10.1f}ms {off * 1e3:8.1f}ms {on / off:6.2f} {share:11.1f}ms")


if __name__ == "__main__":
    main()
