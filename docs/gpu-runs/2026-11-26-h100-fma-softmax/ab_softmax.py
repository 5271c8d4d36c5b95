"""A/B of the attention kernels before and after the softmax change (a record of the method, not a tool).

Before: the kernels of commit 034a3cc (a product per score, then a subtraction before each exp2); after: the
installed package's (the row max of the raw scores scaled once, each exp2 argument one FFMA). Next to this file:
    git show 034a3cc:kernels/hopper_attention_ws.py > old_ws.py
    git show 034a3cc:kernels/hopper_attention.py > old_ha.py
    python ab_softmax.py [ROUNDS] [DIMS]        # e.g. 6 128,256,64: B4 S8192, H32 (H16 at D=256), bf16
Every kernel is checked against SDPA flash first; then ROUNDS rounds, the order reversed every other round,
each a median of 20 L2-flushed launches (`_common.bench_ms`); medians (range) in TFLOP/s.
"""
import importlib.util, os, statistics, sys
import torch
from tlx_alias.kernels import hopper_attention as ha, hopper_attention_ws as ws
from tlx_alias.kernels._common import bench_ms, poison_, tflops
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(__file__), name + ".py"))
    m = importlib.util.module_from_spec(spec); sys.modules[name] = m; spec.loader.exec_module(m); return m
old_ws, old_ha = load("old_ws"), load("old_ha")
B, S = 4, 8192
HEADS = {64: 32, 128: 32, 256: 16}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
dims = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "128,256,64").split(",")]
print(torch.cuda.get_device_name(), "triton", __import__("triton").__version__)
for d in dims:
    for causal in (False, True):
        H = HEADS[d]
        torch.manual_seed(d + causal)
        q, k, v = (torch.randn(B, H, S, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o = torch.empty_like(q); lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
        flops = 4.0 * B * H * S * S * d * (0.5 if causal else 1.0)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        def cudnn():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        fns = {"ws old": old_ws.make_launch(q, k, v, o, lse, causal), "ws new": ws.make_launch(q, k, v, o, lse, causal)}
        if d in (64, 128):
            fns["ha old"] = old_ha.make_launch(q, k, v, o, lse, causal, None, share=True, KV_STAGES=3)
            fns["ha new"] = ha.make_launch(q, k, v, o, lse, causal, None, share=True, KV_STAGES=3)
        for label, fn in fns.items():
            poison_(o, lse); fn(); torch.cuda.synchronize()
            err = (o.float() - ref.float()).abs().max().item()
            assert err < 2e-2 and bool(lse.isfinite().all()), (label, err)
        fns["cudnn"] = cudnn
        res = {label: [] for label in fns}
        order = list(fns)
        for r in range(rounds):
            for label in (order if r % 2 == 0 else order[::-1]):
                res[label].append(tflops(flops, bench_ms(fns[label], reps=20)))
        med = {l: statistics.median(x) for l, x in res.items()}
        line = "  ".join(f"{l} {med[l]:.1f} ({min(res[l]):.0f}-{max(res[l]):.0f})" for l in fns)
        ratios = f"ws new/old {med['ws new']/med['ws old']:.3f}  ws old/cudnn {med['ws old']/med['cudnn']:.3f}  ws new/cudnn {med['ws new']/med['cudnn']:.3f}"
        if "ha new" in med:
            ratios += f"  ha new/old {med['ha new']/med['ha old']:.3f}"
        print(f"D={d} {'causal' if causal else 'full'}: {line}\n    {ratios}", flush=True)
        del q, k, v, o, lse, ref; torch.cuda.empty_cache()
