"""The warp-specialized Hopper attention against its baselines, interleaved A/B rounds (GPU; a table, not a test).

    python benchmarks/attention_ws_bench.py [--rounds 4] [--reps 20] [--dims 64,128,256] [--masks full,causal]
                                            [--set KEY=VALUE ...] [--sweep] [--quick] [--only LABEL,LABEL]
                                            [--batch 4] [--seq 8192] [--heads 64:32,128:32,256:16]

Per case (bf16, B=4, S=8192, H=32; H=16 at D=256; causal counts half the flops), in one run:

    ws shared        kernels/hopper_attention_ws.py as `attention` runs it: O staged in Q's bytes, the most K/V
                     stages that fit with that sharing (`default_config`; `--set` overrides it)
    ws unshared      the same kernel, O in a tile of its own, at the most stages that fit without sharing
                     (and the same at half the BLOCK_N, where that many more stages fit)
    ws registers     the same kernel writing O straight from the wgmma registers (no staging tile, no sharing)
    ws pingpong      ws shared with the consumers' turn barriers (their wgmmas alternate; off by default: measured
                     slower, see README)
    hopper_attention the non-warp-specialized kernel (D=64/128 only) in its best configuration (3 stages)
    sdpa cudnn / flash / efficient   torch.nn.functional.scaled_dot_product_attention under each backend

Correctness first: every kernel of ours runs once on the benchmark inputs (outputs poisoned with NaN) and is
compared with SDPA's output (max |diff| < 2e-2, LSE finite) before anything is timed; a mismatch stops the run.
Then `--rounds` rounds; in each, every variant is timed with `_timing.bench_ms` (median of `--reps` CUDA-event
timed launches after warm-up, L2 flushed before each), in an order reversed every other round so that clock and
power drift hit all alike (the method of `kernel_profile.py --ab`). The table prints the median TFLOP/s over the
rounds with the range, the ratio of ws shared to cuDNN, to the best unshared ws variant (either unshared or
registers) and to hopper_attention.

`--only 'ws shared,sdpa cudnn'` times just those (a two-way A/B: fewer kernels between two launches of one).
`--batch`, `--seq`, `--heads D:H,...` change the shape (the same work at longer sequences: `--batch 1 --seq 16384`,
or `--seq 32768 --heads 128:8,256:4`).

`--sweep` times knob variants of ws shared (with `--set` applied) against it and the baselines (BLOCK_N,
STAGES, register split, no ping-pong) instead of the unshared variants.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # _timing, also under `python -P`
from _timing import bench_ms, poison_, tflops  # noqa: E402

B, S = 4, 8192
HEADS = {64: 32, 128: 32, 256: 16}


def _parse_sets(items):
    out = {}
    for item in items or []:
        key, _, value = item.partition("=")
        out[key] = int(value) if value.lstrip("-").isdigit() else (value == "True" if value in ("True", "False")
                                                                    else value)
    return out


def _sdpa(name, q, k, v, causal):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
               "efficient": SDPBackend.EFFICIENT_ATTENTION}[name]

    def run():
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def variants(d, overrides=None):
    """{label: config for hopper_attention_ws.make_launch} of the ws variants timed per head dim."""
    from tlx_alias.kernels import hopper_attention_ws as ws
    shared = dict(ws.default_config(d), **(overrides or {}))
    bn = shared["BLOCK_N"]
    half = bn // 2
    return {"ws shared": shared,
            "ws unshared": dict(shared, epilogue="separate", STAGES=ws.most_stages(d, "separate", bn)),
            "ws unshared BN/2": dict(shared, epilogue="separate", BLOCK_N=half,
                                     STAGES=ws.most_stages(d, "separate", half)),
            "ws registers": dict(shared, epilogue="registers", STAGES=ws.most_stages(d, "registers", bn)),
            "ws pingpong": dict(shared, PINGPONG=True)}


def sweep_variants(d, overrides=None):
    from tlx_alias.kernels import hopper_attention_ws as ws
    base = dict(ws.default_config(d), **(overrides or {}))
    out = {"ws shared": base}
    if d == 128:
        out.update({"BN=64 st=4": dict(base, BLOCK_N=64, STAGES=4), "st=2": dict(base, STAGES=2),
                    "regs 232/40": dict(base, CONSUMER_REGS=232, PRODUCER_REGS=40),
                    "pingpong": dict(base, PINGPONG=True)})
    elif d == 256:
        out.update({"BN=32 st=4": dict(base, BLOCK_N=32, STAGES=4), "st=1": dict(base, STAGES=1),
                    "unshared BN=32 st=2": dict(base, BLOCK_N=32, STAGES=2, epilogue="separate"),
                    "pingpong": dict(base, PINGPONG=True)})
    else:
        out.update({"st=4": dict(base, STAGES=4), "st=2": dict(base, STAGES=2),
                    "BN=64 st=8": dict(base, BLOCK_N=64, STAGES=8), "pingpong": dict(base, PINGPONG=True)})
    return out


def run_case(d, causal, rounds, reps, ws_variants, baselines=True, only=None):
    """[(label, [TFLOP/s per round])] for one (head dim, mask); None where a variant does not apply. only: the
    labels to time (default: all)."""
    import torch
    from tlx_alias.kernels import hopper_attention as ha
    from tlx_alias.kernels import hopper_attention_ws as ws

    H = HEADS[d]
    torch.manual_seed(d + causal)
    q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    flops = 4.0 * B * H * S * S * d * (0.5 if causal else 1.0)
    ref = _sdpa("flash", q, k, v, causal)()
    fns = {label: ws.make_launch(q, k, v, o, lse, causal, None, **cfg) for label, cfg in ws_variants.items()}
    if baselines:
        if d in (64, 128):
            fns["hopper_attention"] = ha.make_launch(q, k, v, o, lse, causal, None, share=True, KV_STAGES=3)
        for name in ("cudnn", "flash", "efficient"):
            fns[f"sdpa {name}"] = _sdpa(name, q, k, v, causal)
    if only is not None:
        fns = {label: fn for label, fn in fns.items() if label in only}

    for label, fn in list(fns.items()):          # correctness first, on the benchmark's own inputs
        if label.startswith("sdpa"):
            try:
                out = fn()
            except RuntimeError as exc:          # backend not available for this shape / build
                print(f"  {label}: not available ({str(exc).splitlines()[0][:80]})", flush=True)
                del fns[label]
                continue
            err = (out.float() - ref.float()).abs().max().item()
        else:
            poison_(o, lse)
            fn()
            torch.cuda.synchronize()
            err = (o.float() - ref.float()).abs().max().item()
            if not (err < 2e-2 and bool(lse.isfinite().all())):
                raise SystemExit(f"D={d} causal={causal} {label}: MISMATCH (max|O - SDPA| {err:.3g}, "
                                 f"LSE finite: {bool(lse.isfinite().all())}); not benchmarking")
        print(f"  D={d} causal={causal} {label:<18} max|O - sdpa flash| {err:.3g}", flush=True)

    results = {label: [] for label in fns}
    order = list(fns)
    for r in range(rounds):
        for label in (order if r % 2 == 0 else order[::-1]):
            results[label].append(tflops(flops, bench_ms(fns[label], reps=reps)))
    del q, k, v, o, lse, ref
    torch.cuda.empty_cache()
    return results


def _med(xs):
    return statistics.median(xs) if xs else float("nan")


def _cell(xs):
    return f"{_med(xs):.1f} ({min(xs):.0f}-{max(xs):.0f})" if xs else "n/a"


def _ratio(a, b):
    return f"{_med(a) / _med(b):.2f}" if a and b else "n/a"


def print_tables(table, rounds, sweep=False):
    """Per case every variant's median (range) and configuration; then (not for --sweep) the summary table."""
    for d, causal, res, ws_variants in table:
        print(f"\nD={d} {'causal' if causal else 'full'} (H={HEADS[d]}): TFLOP/s, median (range) of "
              f"{rounds} rounds")
        for label, xs in res.items():
            cfg = ws_variants.get(label)
            extra = (f"  [BN={cfg['BLOCK_N']} stages={cfg['STAGES']} O={cfg['epilogue']} pingpong={cfg['PINGPONG']}"
                     f" regs={cfg['CONSUMER_REGS']}/{cfg['PRODUCER_REGS']}]") if cfg else ""
            ours = cfg is not None or label == "hopper_attention"
            vs = f"  {_ratio(xs, res.get('sdpa cudnn'))} x cuDNN" if sweep and ours else ""
            print(f"  {label:<22} {_cell(xs):>20}{vs}{extra}")
    if sweep:
        return
    print("\nSummary (ratios of medians)")
    head = ["case", "ws shared", "ws unshared", "ws unshared BN/2", "ws registers", "ws pingpong",
            "hopper_attention", "sdpa cudnn", "sdpa flash", "sdpa efficient", "shared/cudnn", "shared/best unshared",
            "shared/hopper_attention"]
    rows = []
    for d, causal, res, _ in table:
        unshared = max((res[k] for k in ("ws unshared", "ws unshared BN/2", "ws registers") if res.get(k)), key=_med,
                       default=[])   # the best of those timed (--only may leave some out)
        rows.append([f"D={d} {'causal' if causal else 'full'}", *(_cell(res.get(h, [])) for h in head[1:10]),
                     _ratio(res["ws shared"], res.get("sdpa cudnn")), _ratio(res["ws shared"], unshared),
                     _ratio(res["ws shared"], res.get("hopper_attention"))])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("-|-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))


def main(argv=None):
    global B, S   # the shape every case runs at (module constants: run_case and the tables read them)
    p = argparse.ArgumentParser(prog="python benchmarks/attention_ws_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--dims", default="128,256,64")
    p.add_argument("--masks", default="full,causal")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key of ws shared's config")
    p.add_argument("--sweep", action="store_true", help="time knob variants of ws shared instead of its unshared ones")
    p.add_argument("--quick", action="store_true", help="2 rounds of 10 reps")
    p.add_argument("--only", help="comma-separated labels to time, e.g. 'ws shared,sdpa cudnn' (default: all)")
    p.add_argument("--batch", type=int, default=B)
    p.add_argument("--seq", type=int, default=S)
    p.add_argument("--heads", help="heads per head dim, e.g. 128:8,256:4 (default: 64:32,128:32,256:16)")
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.reps = 2, 10
    B, S = args.batch, args.seq
    if args.heads:
        HEADS.update({int(d): int(h) for d, h in (item.split(":") for item in args.heads.split(","))})

    import torch
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        print("attention_ws_bench: needs a Hopper (sm_90) GPU; for the compile report run "
              "python benchmarks/kernel_bench.py --kernel hopper_attention_ws")
        return 0
    import triton
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}; bf16, B={B} S={S} H={HEADS}; {args.rounds} interleaved rounds "
          f"x median of {args.reps} runs, L2 flushed\n", flush=True)
    overrides = _parse_sets(args.set)
    table = []
    for d in [int(x) for x in args.dims.split(",")]:
        for causal in [m == "causal" for m in args.masks.split(",")]:
            ws_variants = sweep_variants(d, overrides) if args.sweep else variants(d, overrides)
            res = run_case(d, causal, args.rounds, args.reps, ws_variants,
                           only=set(args.only.split(",")) if args.only else None)
            table.append((d, causal, res, ws_variants))

    print_tables(table, args.rounds, args.sweep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
