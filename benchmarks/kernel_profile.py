"""One launch of one benchmark case after warm-up, for Nsight Compute to wrap (GPU only).

    python benchmarks/kernel_profile.py --case gemm8192|gemm_skinny|gemm2048|gemm4096|attn|attn_causal
                                        [--impl IMPL] [--set KEY=VALUE ...] [--warmup 3]
    python benchmarks/kernel_profile.py --sweep          # time the variants in SWEEP (correctness first)
    python benchmarks/kernel_profile.py --ncu-all DIR [--profiles ws]   # ncu over PROFILES (WS_PROFILES),
                                                                         # one text report each
    python benchmarks/kernel_profile.py --overhead       # host launch cost vs kernel time, short GEMMs
    python benchmarks/kernel_profile.py --ab             # GEMM variants vs torch, interleaved rounds

IMPL: for the GEMM cases `shared` (128x256x64, 4 stages, C on the ring; the default), `noshare` (the best
unshared configuration, 128x256x64 3 stages), `bk128` (128x256x128, 2 stages, shared) or `torch`
(torch.matmul); for attention `shared` (O on Q, 3 K/V stages), `noshare` (2 stages), `ws`
(kernels/hopper_attention_ws.py at its default configuration; the only one for D=256), `cudnn` or `flash`
(SDPA backends). `--set` overrides a launch parameter (`group_m=1`, `num_warps=8`, `PIPELINE=0` ...).

The warm-up launches run first; then exactly one launch runs between cudaProfilerStart/Stop, so

    ncu --profile-from-start off --launch-count 1 --clock-control none \\
        --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \\
        --section Occupancy --section LaunchStats  python benchmarks/kernel_profile.py --case gemm8192

profiles that launch only. Counting launches works too (the warm-up is `--warmup` launches of the same
kernel): `ncu -k regex:hopper_gemm --launch-skip 3 --launch-count 1 ...`. `--ncu-all DIR` does the first
for every entry of PROFILES and writes DIR/ncu-<case>-<impl>.txt.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # _timing, also under `python -P`
from _timing import bench_ms, tflops  # noqa: E402

GEMM_CASES = {"gemm8192": (8192, 8192, 8192), "gemm_skinny": (512, 8192, 8192), "gemm2048": (8192, 8192, 2048),
              "gemm4096": (4096, 4096, 4096)}
ATTN_CASES = {"attn": (4, 32, 8192, 128, False), "attn_causal": (4, 32, 8192, 128, True),
              "attn_d64": (4, 32, 8192, 64, False), "attn_d64_causal": (4, 32, 8192, 64, True),
              "attn_d256": (4, 16, 8192, 256, False), "attn_d256_causal": (4, 16, 8192, 256, True)}
GEMM_IMPLS = {"shared": dict(stages=4, share=True, BK=64), "noshare": dict(stages=3, share=False, BK=64),
              "bk128": dict(stages=2, share=True, BK=128)}
ATTN_IMPLS = {"shared": dict(share=True, KV_STAGES=3), "noshare": dict(share=False, KV_STAGES=2)}

# (case, impl, overrides) timed by --sweep
SWEEP = [
    *[(c, i, {}) for c in ("gemm8192", "gemm_skinny", "gemm2048", "gemm4096")
      for i in ("shared", "noshare", "bk128", "torch")],
    ("gemm_skinny", "shared", {"group_m": 1}), ("gemm_skinny", "shared", {"group_m": 4}),
    *[(c, i, o) for c in ("attn", "attn_causal", "attn_d64", "attn_d64_causal")   # hopper_attention: D <= 128
      for i, o in (("shared", {"PIPELINE": 0}), ("shared", {"PIPELINE": 1}), ("noshare", {"PIPELINE": 0}),
                   ("noshare", {"PIPELINE": 1}), ("cudnn", {}))],
]
# (case, impl, overrides) profiled by --ncu-all
PROFILES = [("gemm8192", "shared", {}), ("gemm8192", "noshare", {}), ("gemm8192", "torch", {}),
            ("gemm_skinny", "shared", {}), ("gemm_skinny", "noshare", {}), ("gemm_skinny", "torch", {}),
            ("attn", "shared", {}), ("attn", "shared", {"PIPELINE": 0}), ("attn", "cudnn", {})]
# the warp-specialized attention against cuDNN where issue 14's goal is missed on the H100 (--profiles ws)
WS_PROFILES = [(case, impl, {}) for case in ("attn", "attn_causal", "attn_d256", "attn_d256_causal")
               for impl in ("ws", "cudnn")]
SECTIONS = ["SpeedOfLight", "WarpStateStats", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats",
            "SchedulerStats"]
STALL_METRICS = r"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
TENSOR_METRICS = ["sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
                  "sm__inst_executed_pipe_tensor_op_gmma.sum"]


def _parse_sets(items):
    out = {}
    for item in items or []:
        key, _, value = item.partition("=")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def make_case(case, impl="shared", overrides=None):
    """(launch, flops, check, kernel_fn): a zero-argument launch of the case with its inputs allocated,
    the flops one launch does, a check() -> (ok, max error) of the last launch's output, and our
    @gluon.jit kernel (None for torch's)."""
    import torch
    import torch.nn.functional as F
    overrides = dict(overrides or {})
    torch.manual_seed(0)
    if case in GEMM_CASES:
        from tlx_alias.kernels import hopper_gemm as hg
        M, N, K = GEMM_CASES[case]
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        if impl == "torch":
            launch, kernel = (lambda: torch.matmul(a, b, out=c)), None
        else:
            launch, kernel = hg.make_launch(a, b, c, **dict(GEMM_IMPLS[impl], **overrides)), hg.hopper_gemm_kernel

        def check():
            ref = a.float() @ b.float()
            err = (c.float() - ref).abs().max().item()
            return torch.allclose(c.float(), ref, rtol=2e-2, atol=0.25) and not c.isnan().any().item(), err
        return launch, 2.0 * M * N * K, check, kernel
    if case in ATTN_CASES:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from tlx_alias.kernels import hopper_attention as ha
        B, H, S, D, causal = ATTN_CASES[case]
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o = torch.full_like(q, float("nan"))
        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
        if impl in backends:
            def launch():  # the caller holds sdpa_kernel([backend]) (see backend_context)
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            kernel = None

            def check():
                return True, 0.0
        elif impl == "ws":
            from tlx_alias.kernels import hopper_attention_ws as ws
            launch = ws.make_launch(q, k, v, o, lse, causal, None, **overrides)
            kernel = ws.attention_ws_kernel
        else:
            launch = ha.make_launch(q, k, v, o, lse, causal, None, **dict(ATTN_IMPLS[impl], **overrides))
            kernel = ha.hopper_attention_kernel
        if kernel is not None:
            def check():  # against cuDNN's SDPA on the same inputs (bf16 out), and LSE finite
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]):
                    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                err = (o.float() - ref.float()).abs().max().item()
                ok = err < 2e-2 and not o.isnan().any().item() and bool(lse.isfinite().all().item())
                return ok, err
        return launch, flops, check, kernel
    sys.exit(f"profile: unknown case {case!r}; choose from {', '.join([*GEMM_CASES, *ATTN_CASES])}")


def backend_context(impl):
    """sdpa_kernel([backend]) for an SDPA impl, else a no-op context."""
    import contextlib
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    return sdpa_kernel([backends[impl]]) if impl in backends else contextlib.nullcontext()


def _compiled(kernel_fn):
    return [compiled for cache in kernel_fn.device_caches.values() for compiled in cache[0].values()]


def sass_summary(kernel_fn, skip=()) -> str:
    """Registers, spills and HGMMA count of every compiled specialization of our kernel (but those in skip)."""
    rows = []
    for compiled in _compiled(kernel_fn):
        if any(compiled is k for k in skip):
            continue
        try:
            hgmma = compiled.asm["sass"].count("HGMMA")
        except Exception as exc:  # no nvdisasm here
            hgmma = f"sass unavailable ({type(exc).__name__})"
        rows.append(f"regs={compiled.n_regs} spills={compiled.n_spills} smem={compiled.metadata.shared} "
                    f"HGMMA={hgmma}")
    return "; ".join(rows) or "(compiled earlier in this run)"


def profile_one(case, impl, overrides, warmup):
    import torch
    launch, flops, check, kernel = make_case(case, impl, overrides)
    with backend_context(impl):
        for _ in range(warmup):
            launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    ok, err = check()
    print(f"profiled one launch of {case} {impl} {overrides or ''}: check {'ok' if ok else 'MISMATCH'} "
          f"(max|err| {err:.3g})")
    if kernel is not None:
        print(f"  {kernel.__name__}: {sass_summary(kernel)}")
    return 0 if ok else 1


def sweep():
    import torch
    rows = []
    for case, impl, overrides in SWEEP:
        t0 = time.time()
        try:
            launch, flops, check, kernel = make_case(case, impl, overrides)
            before = _compiled(kernel) if kernel is not None else []
            with backend_context(impl):
                launch()
                torch.cuda.synchronize()
                ok, err = check()
                if not ok:
                    rows.append((case, impl, overrides, float("nan"), f"MISMATCH {err:.3g}", ""))
                    continue
                tf = tflops(flops, bench_ms(launch, reps=30 if case in ATTN_CASES else 50))
            info = sass_summary(kernel, skip=before) if kernel is not None else ""
            rows.append((case, impl, overrides, tf, f"ok {err:.3g}", info))
        except Exception as exc:
            rows.append((case, impl, overrides, float("nan"), f"error {type(exc).__name__}: {str(exc)[:80]}", ""))
        finally:
            torch.cuda.empty_cache()
        print(f"  {case:<16} {impl:<8} {str(overrides):<16} {rows[-1][3]:7.1f} TFLOP/s  {rows[-1][4]}  "
              f"({time.time() - t0:.1f}s)  {rows[-1][5]}", flush=True)
    print(f"\nsweep on {torch.cuda.get_device_name()}: bf16 TFLOP/s (median, L2 flushed)")
    for case, impl, overrides, tf, status, _ in rows:
        print(f"{case:<16} {impl:<8} {str(overrides):<16} {tf:7.1f}  {status}")
    return 0


def overhead(cases=("gemm_skinny", "gemm4096", "gemm2048"), rounds=2):
    """Where the time of a short GEMM launch goes, outside the kernel: per variant (our kernel through the
    JIT on every call, our kernel launched directly after the first call, torch.matmul) the host time of
    one launch call, and the kernel's time measured four ways: as bench_ms does (memset L2 flush, then the
    launch call between events), a CUDA graph of the launch replayed the same way (no host launch cost),
    the graph after a flush that only reads (L2 left clean, not dirty), and 20 back-to-back launches
    (no flush) per event pair."""
    import torch
    from tlx_alias.kernels import hopper_gemm as hg
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    flush.zero_()

    def events_ms(fn, prep, reps=30, inner=1):
        times = []
        for _ in range(reps):
            if prep is not None:
                prep()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(inner):
                fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) / inner)
        return sorted(times)[len(times) // 2]

    rows = []
    for rnd in range(rounds):
        for case in cases:
            M, N, K = GEMM_CASES[case]
            flops = 2.0 * M * N * K
            torch.manual_seed(rnd)
            a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
            c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            ref = a.float() @ b.float()
            variants = [("jit", hg.make_launch(a, b, c, direct=False)), ("direct", hg.make_launch(a, b, c)),
                        ("torch", lambda: torch.matmul(a, b, out=c))]
            for name, fn in variants:
                ok = True
                for _ in range(3):  # the first call compiles / binds; the later ones take the direct path
                    c.fill_(float("nan"))
                    fn()
                    torch.cuda.synchronize()
                    ok &= bool(torch.allclose(c.float(), ref, rtol=2e-2, atol=0.25)) and not c.isnan().any().item()
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(20):
                    fn()
                host_us = (time.perf_counter() - t0) / 20 * 1e6
                torch.cuda.synchronize()
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    fn()
                g.replay()
                torch.cuda.synchronize()
                ms = {"bench_ms": bench_ms(fn), "graph": bench_ms(g.replay),
                      "graph, read flush": events_ms(g.replay, lambda: flush.sum()),
                      "20 back-to-back": events_ms(fn, None, reps=5, inner=20)}
                rows.append((rnd, case, name, ok, host_us, {k: tflops(flops, v) for k, v in ms.items()}))
                r = rows[-1]
                print(f"  round {rnd} {case:<12} {name:<7} {'ok' if ok else 'MISMATCH'} host {host_us:6.1f} us/launch  "
                      + "  ".join(f"{k} {v:6.1f}" for k, v in r[5].items()), flush=True)
                del g
            del a, b, c, ref
            torch.cuda.empty_cache()
    print(f"\noverhead on {torch.cuda.get_device_name()}: bf16 TFLOP/s by timing method (host: us per launch call)")
    for rnd, case, name, ok, host_us, tf in rows:
        print(f"{rnd} {case:<12} {name:<7} {'ok' if ok else 'MISMATCH':<8} host {host_us:6.1f}  "
              + "  ".join(f"{k}: {v:6.1f}" for k, v in tf.items()))
    return 0 if all(r[3] for r in rows) else 1


def ab(cases=("gemm_skinny", "gemm4096", "gemm2048", "gemm8192"), rounds=6):
    """bench_ms of the GEMM variants interleaved (the order reversed every other round) so that clock and
    power drift hit all alike: shared (4 stages) and no sharing (3 stages), each with and without the
    prefetch of the next tile's loads across the epilogue, and torch.matmul. Prints median, min and max
    TFLOP/s over the rounds."""
    import torch
    from tlx_alias.kernels import hopper_gemm as hg
    for case in cases:
        M, N, K = GEMM_CASES[case]
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ b.float()
        fns = {f"{impl}{'' if pf else '-noprefetch'}": hg.make_launch(a, b, c, prefetch=pf, **GEMM_IMPLS[impl])
               for impl in ("shared", "noshare") for pf in (True, False)}
        fns["torch"] = lambda: torch.matmul(a, b, out=c)
        for name, fn in fns.items():
            c.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            if not (torch.allclose(c.float(), ref, rtol=2e-2, atol=0.25) and not c.isnan().any().item()):
                print(f"{case}: {name} MISMATCH", flush=True)
                return 1
        res = {k: [] for k in fns}
        for r in range(rounds):
            for k in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
                res[k].append(tflops(2.0 * M * N * K, bench_ms(fns[k], reps=30)))
        print(f"{case:<12} " + "  ".join(f"{k}: {sorted(v)[len(v) // 2]:6.1f} ({min(v):6.1f}-{max(v):6.1f})"
                                          for k, v in res.items()), flush=True)
        del a, b, c, ref
        torch.cuda.empty_cache()
    return 0


def find_ncu():
    return shutil.which("ncu") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/ncu"))), None) or next(
        iter(sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))), None)


def ncu_all(outdir, warmup, profiles=PROFILES):
    ncu = find_ncu()
    if ncu is None:
        print("profile: ncu not found")
        return 1
    os.makedirs(outdir, exist_ok=True)
    known = subprocess.run([ncu, "--query-metrics", "--chip", "gh100"], capture_output=True, text=True).stdout
    metrics = [m for m in TENSOR_METRICS if m.split(".")[0] in known]
    print(f"{ncu}; extra metrics: {metrics or 'none found'}", flush=True)
    rc = 0
    for case, impl, overrides in profiles:
        tag = "-".join([case, impl, *(f"{k}{v}" for k, v in overrides.items())])
        cmd = [ncu, "--profile-from-start", "off", "--launch-count", "1" if impl in ("shared", "noshare", "bk128", "ws")
               else "3", "--clock-control", "none", *sum((["--section", s] for s in SECTIONS), [])]
        if metrics:   # with the stall breakdown per issued instruction (the cycles WarpStateStats sums up)
            cmd += ["--metrics", ",".join(metrics + [STALL_METRICS])]
        cmd += [sys.executable, "benchmarks/kernel_profile.py", "--case", case, "--impl", impl,
                "--warmup", str(warmup), *sum((["--set", f"{k}={v}"] for k, v in overrides.items()), [])]
        t0 = time.time()
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
            text, code = res.stdout + res.stderr, res.returncode
        except subprocess.TimeoutExpired as exc:
            text, code = f"{exc.stdout or ''}{exc.stderr or ''}\nTIMEOUT", 124
        path = os.path.join(outdir, f"ncu-{tag}.txt")
        with open(path, "w") as f:
            f.write("$ " + " ".join(cmd) + "\n\n" + (text if isinstance(text, str) else text.decode()))
        print(f"  {tag}: rc={code} in {time.time() - t0:.0f}s -> {path}", flush=True)
        rc |= code
    return rc


def main(argv=None):
    p = argparse.ArgumentParser(prog="python benchmarks/kernel_profile.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=[*GEMM_CASES, *ATTN_CASES])
    p.add_argument("--impl", default="shared")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="launch parameter override")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--sweep", action="store_true", help="time the SWEEP variants instead")
    p.add_argument("--ncu-all", metavar="DIR", help="profile every PROFILES entry under ncu into DIR")
    p.add_argument("--profiles", choices=["default", "ws"], default="default",
                   help="what --ncu-all profiles: PROFILES (GEMM, hopper_attention) or WS_PROFILES")
    p.add_argument("--overhead", action="store_true", help="host launch cost vs kernel time of short GEMMs")
    p.add_argument("--ab", action="store_true", help="GEMM variants (sharing, prefetch) vs torch, interleaved rounds")
    args = p.parse_args(argv)
    if args.sweep:
        return sweep()
    if args.ncu_all:
        return ncu_all(args.ncu_all, args.warmup, WS_PROFILES if args.profiles == "ws" else PROFILES)
    if args.overhead:
        return overhead()
    if args.ab:
        return ab()
    if not args.case:
        p.error("--case, --sweep or --ncu-all is needed")
    return profile_one(args.case, args.impl, _parse_sets(args.set), args.warmup)


if __name__ == "__main__":
    sys.exit(main())
