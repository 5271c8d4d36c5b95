"""Small launches of the warp-specialized Hopper GEMM, checked against an fp32 product (GPU only).

    python test/tools/gpu_smoke_gemm_ws.py

Run first by `scripts/gpu_run.sh gemm-ws`, under a time limit: a kernel whose ring hand-off deadlocks hangs here,
in a few small launches, before the tests and the benchmark. Both dtypes, both variants (C on the B ring, C
private); one tile (128 x 256 x 64), ragged edges and short K (300 x 520 x 1000), more tiles than SMs with one
k-step each (4096 x 4096 x 64: back-to-back epilogues), and a tile count that is not a multiple of the grid.
Outputs are poisoned with NaN before every launch; prints one line per launch, exits 1 on a mismatch.
"""
import sys
import time

import torch

from tlx_alias.kernels import hopper_gemm_ws as ws

SHAPES = [(128, 256, 64), (300, 520, 1000), (4096, 4096, 64), (2500, 4104, 200)]


def run(M, N, K, dtype, share) -> bool:
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    t0 = time.perf_counter()
    ws.matmul(a, b, out=c, share=share)
    torch.cuda.synchronize()
    took = time.perf_counter() - t0
    err = (c.float() - a.float() @ b.float()).abs().max().item()
    good = err == err and torch.allclose(c.float(), a.float() @ b.float(), rtol=2e-2, atol=0.25)
    print(f"hopper_gemm_ws {str(dtype)[6:]:>8} {M}x{N}x{K} share={share!s:<5} max|err| {err:.3g} "
          f"({took:.2f} s incl. compile) {'ok' if good else 'MISMATCH'}", flush=True)
    return good


def main() -> int:
    if not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9):
        print("needs a Hopper (sm_90) GPU")
        return 1
    ok = True
    for dtype in (torch.bfloat16, torch.float16):
        for share in (True, False):
            for M, N, K in SHAPES:
                ok &= run(M, N, K, dtype, share)
    print("all ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
