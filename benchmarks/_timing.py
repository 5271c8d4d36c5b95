"""GPU timing for the benchmarks (not part of the package): CUDA-event medians with the L2 flushed, NaN-poisoned
outputs (a kernel that skips a tile cannot pass a check that follows), TFLOP/s."""


def poison_(*tensors):
    """Fill output tensors with NaN in place (integer tensors with -1)."""
    for t in tensors:
        t.fill_(float("nan") if t.dtype.is_floating_point else -1)


def bench_ms(fn, *, before=None, warmup: int = 10, reps: int = 50) -> float:
    """Median milliseconds of `fn()` over `reps` timed runs after `warmup` untimed ones, with CUDA events.

    `before()` (e.g. `lambda: poison_(out)`) runs before every call, outside the timed region; the L2
    cache is flushed between runs (as triton.testing.do_bench does) so every run reads from HBM.
    """
    import torch
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    for _ in range(warmup):
        if before is not None:
            before()
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if before is not None:
            before()
        flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return times[len(times) // 2]


def tflops(flops: float, ms: float) -> float:
    return flops / (ms * 1e-3) / 1e12
