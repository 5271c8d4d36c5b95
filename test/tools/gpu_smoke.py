"""One small launch of each Hopper kernel with its buffers placed by the plugin, checked against torch.

    python test/tools/gpu_smoke.py            (run under compute-sanitizer by scripts/gpu_run.sh)

Small ragged shapes keep memcheck/racecheck fast; every output is poisoned with NaN before the launch.
Also prints how many HGMMA instructions the SASS of each kernel has (wgmma really reaches the hardware).
"""

import sys

import torch

from tlx_alias.kernels import hopper_attention as ha
from tlx_alias.kernels import hopper_gemm as hg


def _sass_hgmma(kernel_fn) -> str:
    """HGMMA count in the SASS of every compiled specialization of a @gluon.jit kernel."""
    counts = []
    for cache in kernel_fn.device_caches.values():
        for compiled in cache[0].values():
            try:
                counts.append(compiled.asm["sass"].count("HGMMA"))
            except Exception as exc:  # no cuobjdump/nvdisasm: say so, do not fail the smoke run
                return f"sass unavailable ({type(exc).__name__})"
    return f"HGMMA in SASS: {counts}"


def main() -> int:
    torch.manual_seed(0)
    ok = True
    for M, N, K in [(300, 200, 152), (129, 264, 72)]:      # ragged (TMA needs K, N % 8 == 0)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        hg.matmul(a, b, out=c)
        torch.cuda.synchronize()
        good = torch.allclose(c.float(), a.float() @ b.float(), rtol=2e-2, atol=0.25)
        print(f"hopper_gemm {M}x{N}x{K}: {'ok' if good else 'MISMATCH'}")
        ok &= good
    print("hopper_gemm", _sass_hgmma(hg.hopper_gemm_kernel))
    for causal in (False, True):
        q, k, v = (torch.randn(1, 2, 200, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        o, lse = ha.attention(q, k, v, causal=causal)
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        good = torch.allclose(o.float(), ref, atol=2e-2, rtol=0) and not o.isnan().any().item()
        print(f"hopper_attention causal={causal}: {'ok' if good else 'MISMATCH'}")
        ok &= good
    print("hopper_attention", _sass_hgmma(ha.hopper_attention_kernel))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
