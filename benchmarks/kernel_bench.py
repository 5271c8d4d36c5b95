"""Benchmark (GPU) or compile report (CPU) of the kernels in `tlx_alias.kernels`.

    python benchmarks/kernel_bench.py [--kernel NAME] [--quick] [--no-proof] [--rounds N]

With a CUDA GPU: for each kernel that runs on it (Hopper kernels on sm_90), correctness against PyTorch
first (outputs poisoned with NaN before every run, fresh random inputs), then one table per kernel, all in
this run: TFLOP/s of our kernel, of the same kernel without sharing (the best configuration that fits),
of PyTorch's best (`torch.matmul`; `scaled_dot_product_attention` under each available backend), and
the ratios. Times are medians of many CUDA-event-timed runs after warm-up, with the L2 flushed before
each run (`_timing.bench_ms`).

`--kernel hopper_gemm_ws`: the warp-specialized GEMM against torch.matmul (cuBLAS), its own unshared variant
and hopper_gemm, in `--rounds` interleaved A/B rounds (every variant timed once per round, the order reversed
every other round, so that clock and power drift hit all alike); the table prints the median TFLOP/s over the
rounds with their range, and the ratios; `--sweep` adds knob variants of it (GROUP_M, register split, stages,
128 x 128 tiles).

Without a GPU (or always, first): compile every kernel for its target on this machine through the
plugin, and print per configuration the SMEM bytes (`metadata.shared`) and TMEM columns, with and
without sharing, the compile time, and the Z3 proof verdict when `tlx_alias.verify` is present. Each
kernel module provides `cpu_report() -> list[dict]`; a module that is missing is skipped with a note.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # _timing, also under `python -P`
from _timing import bench_ms, poison_, tflops  # noqa: E402

KERNELS = ("hopper_gemm", "hopper_gemm_ws", "hopper_attention", "hopper_attention_ws", "blackwell_gemm",
           "blackwell_attention")


def _select(name: str | None):
    if not name:
        return list(KERNELS)
    hits = [k for k in KERNELS if k == name] or [k for k in KERNELS if name in k]
    if not hits:
        sys.exit(f"bench: unknown kernel {name!r}; choose from {', '.join(KERNELS)} (or a part of a name)")
    return hits


def _module(name: str):
    try:
        return importlib.import_module(f"tlx_alias.kernels.{name}"), None
    except ImportError as exc:
        return None, f"{type(exc).__name__}: {exc}"


# ----------------------------------------------------------------------------------------------- CPU report

def _fmt_bytes(n):
    return "-" if n is None else f"{n} ({n / 1024:.1f} KiB)"


def print_table(headers, rows):
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def cpu_report(names, quick=False, proof=True) -> list:
    rows, notes = [], []
    for name in names:
        mod, why = _module(name)
        fn = getattr(mod, "cpu_report", None) if mod else None
        if fn is None:
            notes.append(f"{name}: skipped ({why or 'no cpu_report()'})")
            continue
        params = inspect.signature(fn).parameters
        kwargs = {k: v for k, v in (("quick", quick), ("proof", proof)) if k in params}
        try:
            rows += fn(**kwargs)
        except Exception as exc:  # one broken module must not hide the others' rows
            notes.append(f"{name}: cpu_report() failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    print("Compile report (kernels compiled on this machine for their target, through the tlx-alias plugin)\n")
    print_table(["kernel", "config", "target", "smem bytes", "tmem cols", "compile s", "proof"],
                [[r.get("kernel"), r.get("config"), r.get("target"), _fmt_bytes(r.get("smem_bytes")),
                  "-" if r.get("tmem_cols") is None else r.get("tmem_cols"),
                  "-" if r.get("compile_s") is None else f"{r['compile_s']:.2f}", r.get("proof")] for r in rows])
    for note in notes:
        print(f"note: {note}")
    print()
    return rows


# ----------------------------------------------------------------------------------------------- GPU: GEMM

def _fits(compile_fn, **cfg) -> bool:
    from tlx_alias.errors import TlxAliasError
    try:
        compile_fn(**cfg)
        return True
    except TlxAliasError:
        return False


def bench_gemm(quick=False):
    import torch
    from tlx_alias.kernels import hopper_gemm as hg

    from triton.experimental.gluon import language as gl
    shared_cfg = dict(stages=4, share=True, BM=128, BN=256, BK=64)
    candidates = [dict(stages=s, BM=128, BN=bn, BK=64) for bn, s in ((256, 3), (256, 2), (128, 4), (128, 3))]
    # The baseline is the best configuration that fits WITHOUT sharing, chosen per shape below.
    plain_cfgs = [dict(c, share=False) for c in candidates
                  if _fits(hg.compile_gemm, dtype=gl.bfloat16, share=False, **c)]
    plain_cfg = plain_cfgs[0] if plain_cfgs else None

    print("hopper_gemm: correctness against torch (fp32 reference)")
    torch.manual_seed(0)
    shapes = [(1000, 1000, 1000), (777, 1032, 520), (4096, 4096, 4096)] if not quick else [(777, 1032, 520)]
    for dtype in (torch.bfloat16, torch.float16):
        for M, N, K in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            ref = a.float() @ b.float()
            for cfg in filter(None, (shared_cfg, plain_cfg)):
                c = torch.empty(M, N, device="cuda", dtype=dtype)
                poison_(c)
                hg.matmul(a, b, out=c, **cfg)
                torch.cuda.synchronize()
                err = (c.float() - ref).abs().max().item()
                ok = torch.allclose(c.float(), ref, rtol=2e-2, atol=0.25) and not c.isnan().any().item()
                print(f"  {str(dtype)[6:]:>8} {M}x{N}x{K} {_cfg(cfg):<40} max|err| {err:.3g}  "
                      f"{'ok' if ok else 'MISMATCH'}")
                if not ok:
                    raise SystemExit("hopper_gemm: wrong result; not benchmarking")

    sizes = [(4096, 4096, 4096)] if quick else [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048),
                                                (512, 8192, 8192)]
    rows = []
    for M, N, K in sizes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        flops = 2.0 * M * N * K
        reps = 20 if quick else 50
        ours = tflops(flops, bench_ms(hg.make_launch(a, b, c, **shared_cfg), before=lambda: poison_(c), reps=reps))
        assert not c.isnan().any().item(), "hopper_gemm left NaN in the output"
        plain, best_plain = float("nan"), None
        for cfg in plain_cfgs:
            tf = tflops(flops, bench_ms(hg.make_launch(a, b, c, **cfg), before=lambda: poison_(c), reps=reps))
            if not tf <= plain:
                plain, best_plain = tf, cfg
        torch_tf = tflops(flops, bench_ms(lambda: torch.matmul(a, b, out=c), before=lambda: poison_(c), reps=reps))
        rows.append([f"{M}x{N}x{K}", f"{ours:.1f}", f"{plain:.1f} ({_cfg(best_plain)})", f"{torch_tf:.1f}",
                     f"{ours / plain:.2f}",
                     f"{ours / torch_tf:.2f}"])
    print(f"\nhopper_gemm bf16 TFLOP/s  (shared: {_cfg(shared_cfg)};  no sharing: best of "
          f"{', '.join(_cfg(c) for c in plain_cfgs) or 'none fits'})")
    print_table(["M x N x K", "ours shared", "ours no-share", "torch.matmul", "shared/no-share", "shared/torch"],
                rows)
    print()


# `--sweep`: knob variants of ws shared, timed in the same rounds (make_launch keyword arguments)
GEMM_WS_SWEEP = {"ws group_m=16": dict(group_m=16), "ws group_m=4": dict(group_m=4),
                 "ws regs 232/40": dict(consumer_regs=232, producer_regs=40),
                 "ws shared 3 stages": dict(stages=3), "ws 128x128 7 stages": dict(BN=128, stages=7)}


def bench_gemm_ws(quick=False, rounds=4, sweep=False):
    """hopper_gemm_ws (shared, 4 stages) vs its unshared variant (3 stages), hopper_gemm and torch.matmul,
    interleaved A/B rounds on the issue's four shapes (bf16); `sweep` adds GEMM_WS_SWEEP's variants."""
    import statistics

    import torch
    from tlx_alias.kernels import hopper_gemm as hg
    from tlx_alias.kernels import hopper_gemm_ws as ws

    print("hopper_gemm_ws: correctness against torch (fp32 reference)")
    torch.manual_seed(0)
    shapes = [(777, 1032, 520)] if quick else [(1000, 1000, 1000), (777, 1032, 520), (4133, 3000, 200),
                                               (4096, 4096, 4096)]
    for dtype in (torch.bfloat16, torch.float16):
        for M, N, K in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            ref = a.float() @ b.float()
            for share in (True, False):
                c = torch.empty(M, N, device="cuda", dtype=dtype)
                poison_(c)
                ws.matmul(a, b, out=c, share=share)
                torch.cuda.synchronize()
                err = (c.float() - ref).abs().max().item()
                ok = torch.allclose(c.float(), ref, rtol=2e-2, atol=0.25) and not c.isnan().any().item()
                print(f"  {str(dtype)[6:]:>8} {M}x{N}x{K} share={share!s:<5} max|err| {err:.3g}  "
                      f"{'ok' if ok else 'MISMATCH'}", flush=True)
                if not ok:
                    raise SystemExit("hopper_gemm_ws: wrong result; not benchmarking")

    sizes = [(4096, 4096, 4096)] if quick else [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048),
                                                (512, 8192, 8192)]
    reps = 20 if quick else 40
    labels = ["ws shared", "ws unshared", "hopper_gemm", "torch.matmul"] + (list(GEMM_WS_SWEEP) if sweep else [])
    rows = []
    for M, N, K in sizes:
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        flops = 2.0 * M * N * K
        fns = {"ws shared": ws.make_launch(a, b, c, share=True), "ws unshared": ws.make_launch(a, b, c, share=False),
               "hopper_gemm": hg.make_launch(a, b, c), "torch.matmul": lambda: torch.matmul(a, b, out=c)}
        fns.update({k: ws.make_launch(a, b, c, share=True, **GEMM_WS_SWEEP[k]) for k in labels if k in GEMM_WS_SWEEP})
        times = {k: [] for k in labels}
        for r in range(rounds):
            for label in (labels if r % 2 == 0 else labels[::-1]):
                times[label].append(tflops(flops, bench_ms(fns[label], before=lambda: poison_(c), reps=reps)))
                if label.startswith("ws"):
                    assert not c.isnan().any().item(), f"hopper_gemm_ws ({label}) left NaN in the output"
        med = {k: statistics.median(v) for k, v in times.items()}
        cell = lambda k: f"{med[k]:.1f} [{min(times[k]):.0f}-{max(times[k]):.0f}]"  # noqa: E731
        best = max((k for k in labels if k.startswith("ws")), key=med.get)
        rows.append([f"{M}x{N}x{K}", *(cell(k) for k in labels), f"{med['ws shared'] / med['torch.matmul']:.3f}",
                     f"{med['ws shared'] / med['ws unshared']:.3f}", f"{med['ws shared'] / med['hopper_gemm']:.3f}",
                     f"{best}: {med[best] / med['torch.matmul']:.3f}"])
        print(f"  {M}x{N}x{K}: " + ", ".join(f"{k} {med[k]:.1f}" for k in labels), flush=True)
    print(f"\nhopper_gemm_ws bf16 TFLOP/s, median [range] of {rounds} interleaved rounds x median of {reps} runs, "
          f"L2 flushed  (ws shared: 128x256x64, 4 stages, C on the B ring; ws unshared: 3 stages, C private; "
          f"hopper_gemm: its defaults)")
    print_table(["M x N x K", *labels, "shared/torch", "shared/unshared", "shared/hopper_gemm", "best ws/torch"],
                rows)
    print()


def _cfg(cfg):
    if cfg is None:
        return "-"
    tile = f"{cfg.get('BM', 128)}x{cfg.get('BN', 256)}x{cfg.get('BK', 64)}" if "BM" in cfg else ""
    rest = " ".join(f"{k}={v}" for k, v in cfg.items() if k not in ("BM", "BN", "BK"))
    return f"{tile} {rest}".strip()


# ----------------------------------------------------------------------------------------------- GPU: attention

def _reference_attention(q, k, v, causal, sm_scale):
    """O and LSE (natural log) in fp32 from the 16-bit inputs."""
    import torch
    s = (q.float() @ k.float().transpose(-1, -2)) * sm_scale
    if causal:
        S = q.shape[2]
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    lse = s.logsumexp(-1)
    return (s - lse[..., None]).exp() @ v.float(), lse


def _sdpa_backends():
    from torch.nn.attention import SDPBackend
    return [(name, getattr(SDPBackend, attr)) for name, attr in
            (("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"))
            if hasattr(SDPBackend, attr)]


def bench_attention(quick=False):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel
    from tlx_alias.kernels import hopper_attention as ha

    from triton.experimental.gluon import language as gl

    def best(share, d):
        for stages in (3, 2):
            if _fits(ha.compile_attention, dtype=gl.bfloat16, head_dim=d, share=share, kv_stages=stages):
                return {"share": share, "KV_STAGES": stages}
        return None

    print("hopper_attention: correctness against an fp32 reference (O and LSE)")
    torch.manual_seed(0)
    shapes = [(1, 2, 1000), (2, 3, 256)] if quick else [(1, 2, 1000), (2, 3, 256), (1, 4, 2048), (1, 1, 77)]
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            for causal in (False, True):
                for B, H, S in shapes:
                    q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=dtype) for _ in range(3))
                    scale = 1.0 / math.sqrt(d)
                    o_ref, lse_ref = _reference_attention(q, k, v, causal, scale)
                    for cfg in filter(None, (best(True, d), best(False, d))):
                        o = torch.empty_like(q)
                        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
                        poison_(o, lse)
                        ha.make_launch(q, k, v, o, lse, causal, scale, **cfg)()
                        torch.cuda.synchronize()
                        eo = (o.float() - o_ref).abs().max().item()
                        el = (lse - lse_ref).abs().max().item()
                        ok = eo < 2e-2 and el < 1e-2
                        print(f"  {str(dtype)[6:]:>8} D={d:<3} causal={causal!s:<5} B,H,S={B},{H},{S:<5} "
                              f"{_cfg(cfg):<22} max|dO| {eo:.3g} max|dLSE| {el:.3g}  {'ok' if ok else 'MISMATCH'}")
                        if not ok:
                            raise SystemExit("hopper_attention: wrong result; not benchmarking")

    B, H, S = (2, 16, 4096) if quick else (4, 32, 8192)
    rows = []
    for d in ((128, ) if quick else (128, 64)):
        ours_cfg, plain_cfg = best(True, d), best(False, d)
        for causal in (False, True):
            q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            o = torch.empty_like(q)
            lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
            flops = 4.0 * B * H * S * S * d * (0.5 if causal else 1.0)
            reps = 10 if quick else 30

            def ours_of(cfg):
                if cfg is None:
                    return float("nan")
                ms = bench_ms(ha.make_launch(q, k, v, o, lse, causal, None, **cfg), before=lambda: poison_(o, lse),
                              reps=reps)
                assert not o.isnan().any().item() and not lse.isnan().any().item(), "NaN left in O or LSE"
                return tflops(flops, ms)

            ours, plain = ours_of(ours_cfg), ours_of(plain_cfg)
            sdpa = {}
            for name, backend in _sdpa_backends():
                try:
                    with sdpa_kernel([backend]):
                        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        sdpa[name] = tflops(flops, bench_ms(
                            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps=reps))
                except RuntimeError:
                    sdpa[name] = float("nan")
            torch_best = max((x for x in sdpa.values() if x == x), default=float("nan"))
            rows.append([f"D={d} causal={causal}", f"{ours:.1f} ({_cfg(ours_cfg)})", f"{plain:.1f} ({_cfg(plain_cfg)})",
                         *(f"{sdpa.get(n, float('nan')):.1f}" for n, _ in _sdpa_backends()),
                         f"{ours / plain:.2f}", f"{ours / torch_best:.2f}"])
    print(f"\nhopper_attention bf16 TFLOP/s, B={B} H={H} S={S} (causal counts half the flops)")
    print_table(["case", "ours shared", "ours no-share", *(f"sdpa {n}" for n, _ in _sdpa_backends()),
                 "shared/no-share", "shared/best torch"], rows)
    print()


GPU_BENCHES = {"hopper_gemm": (9, bench_gemm), "hopper_gemm_ws": (9, bench_gemm_ws),
               "hopper_attention": (9, bench_attention)}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python benchmarks/kernel_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--kernel", help=f"one of {', '.join(KERNELS)} (or a part of a name)")
    p.add_argument("--quick", action="store_true", help="fewer configurations, sizes and repetitions")
    p.add_argument("--no-proof", action="store_true", help="skip the Z3 proof in the compile report")
    p.add_argument("--rounds", type=int, default=4, help="interleaved A/B rounds (hopper_gemm_ws)")
    p.add_argument("--sweep", action="store_true", help="hopper_gemm_ws: also time its knob variants")
    args = p.parse_args(argv)
    names = _select(args.kernel)

    cpu_report(names, quick=args.quick, proof=not args.no_proof)

    try:
        import torch
        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if not has_gpu:
        print("no CUDA GPU here: compile report only")
        return 0
    major, minor = torch.cuda.get_device_capability()
    print(f"GPU: {torch.cuda.get_device_name()} (sm_{major}{minor}), torch {torch.__version__}\n")
    for name in names:
        arch, bench = GPU_BENCHES.get(name, (None, None))
        if name == "hopper_attention_ws":
            print(f"{name}: its A/B table is python benchmarks/attention_ws_bench.py (scripts/gpu_run.sh ws-bench)")
        elif bench is None:
            print(f"{name}: no GPU benchmark here (compile report above)")
        elif arch != major:
            print(f"{name}: needs sm_{arch}x, this GPU is sm_{major}{minor}: skipped")
        elif name == "hopper_gemm_ws":
            bench(quick=args.quick, rounds=args.rounds, sweep=args.sweep)
        else:
            bench(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
