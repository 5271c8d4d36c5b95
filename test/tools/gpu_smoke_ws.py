"""Small launches of the warp-specialized Hopper attention, checked against an fp32 reference (GPU only).

    python test/tools/gpu_smoke_ws.py [--small] [--sass]

Run under compute-sanitizer (memcheck, racecheck) by `scripts/gpu_run.sh ws` with --small (one head, S = 200:
two programs per head, a ragged last block of rows and keys; every head dim and mask with O on Q, and the
unshared / register-epilogue variants at D = 128). Without --small it also runs a few heads at S = 1000.
Outputs are poisoned with NaN before every launch. --sass: at the end, per partition of each compiled kernel,
the HGMMA / TMA / exp2 counts of its SASS (`test/tools/sass.py`, nvdisasm of the cubin).
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


def main() -> int:
    small = "--small" in sys.argv
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
