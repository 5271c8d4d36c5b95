"""Does `compute-sanitizer --tool racecheck` report hazards on Triton's own warp_specialize hand-off?

A warp-specialized kernel with no shared memory of its own: the default partition and one worker each
store a value to global memory; the only shared memory is what Triton's warp_specialize lowering uses
to hand captures to the workers. Run under racecheck: a hazard reported here is in Triton's protocol,
not in a kernel's aliasing (used to read the racecheck log of kernels/hopper_attention_ws.py).
"""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

LAYOUT: gl.constexpr = gl.BlockedLayout([1], [32], [1], [0])


@gluon.jit
def _default(out_ptr, x):
    gl.store(out_ptr + gl.arange(0, 32, layout=gl.BlockedLayout([1], [32], [4], [0])) * 0, x)


@gluon.jit
def _worker(out_ptr, x):
    gl.store(out_ptr + 1 + gl.arange(0, 32, layout=LAYOUT) * 0, x + 1)


@gluon.jit
def _worker4(out_ptr, x):
    gl.store(out_ptr + 2 + gl.arange(0, 32, layout=gl.BlockedLayout([1], [32], [4], [0])) * 0, x + 2)


@gluon.jit
def probe_kernel(out_ptr, x):
    gl.warp_specialize([(_default, (out_ptr, x)), (_worker, (out_ptr, x))], [1], [24])


@gluon.jit
def probe2_kernel(out_ptr, x):
    """The shape of hopper_attention_ws: a 4-warp and a 1-warp worker, registers rebalanced."""
    gl.warp_specialize([(_default, (out_ptr, x)), (_worker4, (out_ptr, x)), (_worker, (out_ptr, x))], [4, 1],
                       [240, 24])


if __name__ == "__main__":
    for kernel, want in ((probe_kernel, [41, 42, 0]), (probe2_kernel, [41, 42, 43])):
        out = torch.zeros(3, dtype=torch.int32, device="cuda")
        for _ in range(3):
            kernel[(132,)](out, 41, num_warps=4)
        torch.cuda.synchronize()
        print(kernel.fn.__name__, out.tolist(), "ok" if out.tolist() == want else "WRONG")
