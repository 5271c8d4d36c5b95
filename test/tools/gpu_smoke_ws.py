"""Small launches of the warp-specialized Hopper attention, checked against an fp32 reference (GPU only).

    python test/tools/gpu_smoke_ws.py [--small] [--sass] [--warm]

Run under compute-sanitizer (memcheck, racecheck) by `scripts/gpu_run.sh ws` with --small (one head, S = 200:
two programs per head, a ragged last block of rows and keys; every head dim and mask with O on Q, and the
unshared / register-epilogue variants at D = 128). Without --small it also runs a few heads at S = 1000.
Outputs are poisoned with NaN before every launch. --sass: at the end, per partition of each compiled kernel,
the HGMMA / TMA / exp2 counts of its SASS (`test/tools/sass.py`, nvdisasm of the cubin). --warm: first compile,
in parallel processes, every configuration that `scripts/gpu_run.sh ws` launches (tests and benchmark included)
into the Triton cache.
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass  # noqa: E402

from tlx_alias.kernels import hopper_attention_ws as ws  # noqa: E402

CASES = [(d, causal, {}) for d in (64, 128, 256) for causal in (False, True)] + [
    (128, True, {"epilogue": "separate", "STAGES": 2}), (128, False, {"epilogue": "registers"}),
    (256, True, {"epilogue": "separate", "STAGES": 1})]


def run(B, H, S, d, causal, config) -> bool:
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    scale = 1.0 / math.sqrt(d)
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    lse_ref = s.logsumexp(-1)
    o_ref = (s - lse_ref[..., None]).exp() @ v.float()
    o = torch.full_like(q, float("nan"))
    lse = torch.full((B, H, S), float("nan"), device="cuda")
    ws.make_launch(q, k, v, o, lse, causal, scale, **config)()
    torch.cuda.synchronize()
    eo, el = (o.float() - o_ref).abs().max().item(), (lse - lse_ref).abs().max().item()
    good = eo < 2e-2 and el < 1e-2
    print(f"hopper_attention_ws B,H,S={B},{H},{S} D={d} causal={causal} {config or 'default'}: "
          f"max|dO| {eo:.3g} max|dLSE| {el:.3g} {'ok' if good else 'MISMATCH'}", flush=True)
    return good


def _label(compiled) -> str:
    """The constexprs a JIT-compiled specialization was built with (HEAD_DIM=..., ...)."""
    try:
        names = ws.attention_ws_kernel.arg_names
        return " ".join(f"{names[k[0]]}={v}" for k, v in sorted(compiled.src.constants.items())
                        if len(k) == 1 and names[k[0]].isupper())
    except Exception as exc:  # the label is for the log only
        return f"(constexprs unavailable: {type(exc).__name__})"


def warm_configs():
    """(dtype, head_dim, causal, config) of every kernel `scripts/gpu_run.sh ws` launches: the smoke's, the GPU
    tests' and the benchmark's (a configuration missing here is compiled where it is first launched)."""
    import runpy
    bench = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "attention_ws_bench.py"))
    tests = [(128, dict(epilogue="separate", STAGES=2)), (128, dict(epilogue="registers")),
             (128, dict(epilogue="plain", STAGES=2)), (128, dict(PINGPONG=False)), (128, dict(STAGES=1)),
             (128, dict(STAGES=2, BLOCK_N=64)), (256, dict(epilogue="separate", STAGES=1)),
             (256, dict(epilogue="registers")), (64, dict(epilogue="separate")),
             (64, dict(STAGES=2, CONSUMER_REGS=232, PRODUCER_REGS=40))]
    out = [(dtype, d, causal, {}) for dtype in ("bfloat16", "float16") for d in ws.HEAD_DIMS for causal in (0, 1)]
    out += [("bfloat16", d, causal, config) for d, config in tests for causal in (0, 1)]
    out += [("bfloat16", d, causal, config) for d, causal, config in CASES]
    out += [("bfloat16", d, causal, cfg) for d in ws.HEAD_DIMS for causal in (0, 1)
            for cfg in bench["variants"](d).values()]
    unique = {}
    for dtype, d, causal, config in out:
        full = dict(ws.default_config(d), **config)
        unique[(dtype, d, bool(causal), tuple(sorted(full.items())))] = (dtype, d, bool(causal), full)
    return list(unique.values())


def _warm_one(item):
    dtype, d, causal, config = item
    try:
        q = torch.zeros(1, 1, 128, d, device="cuda", dtype=getattr(torch, dtype))
        o, lse = torch.empty_like(q), torch.empty(1, 1, 128, device="cuda")
        ws.make_launch(q, q, q, o, lse, causal, None, **config)()
        torch.cuda.synchronize()
        return None
    except Exception as exc:  # reported; the launches that follow fail on it with the full traceback
        return f"warm: {dtype} D={d} causal={causal} {config}: {type(exc).__name__}: {str(exc)[:200]}"


def warm(processes: int) -> None:
    """Compile every configuration of `warm_configs()` into the Triton cache, `processes` at a time (one launch
    each on a tiny input, so that the JIT's own cache key is the one filled)."""
    import multiprocessing
    import time
    t0 = time.time()
    items = warm_configs()
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        for error in pool.imap_unordered(_warm_one, items):
            if error:
                print(error, flush=True)
    print(f"warm: {len(items)} configurations compiled in {time.time() - t0:.0f} s ({processes} processes)",
          flush=True)


def main() -> int:
    small = "--small" in sys.argv
    if "--warm" in sys.argv:
        warm(min(16, os.cpu_count() or 1))
    ok = True
    for d, causal, config in CASES:
        ok &= run(1, 1, 200, d, causal, config)
        if not small:
            ok &= run(2, 3, 1000, d, causal, config)
    if "--sass" in sys.argv:
        for cache in ws.attention_ws_kernel.device_caches.values():
            for compiled in cache[0].values():
                text = sass.disassemble(compiled.asm["cubin"])
                print(f"SASS of {_label(compiled)}, {compiled.metadata.shared} B SMEM: "
                      f"{sass.summary(text) if text else 'no nvdisasm'}; exp2s between the waits of each K/V loop: "
                      f"{sass.softmax_overlap(text) if text else '-'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
