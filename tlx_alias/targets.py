"""What a target GPU offers the kernels this project lays out: one home for these facts.

Shared memory one block may use (the opt-in maximum of `cudaFuncSetAttribute`, what Triton's launcher
allows: 227 KiB on sm_90 and sm_100) and tensor memory (sm_100: 512 columns of 32 bits x 128 lanes).
The passes check a spec against them, the verifier's P6 and the whole-kernel check after Triton's
`llir` stage check every allocation against them, and the kernels size their stages from them.
"""
from __future__ import annotations

import re

SMEM_BYTES = {80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448, 100: 232448, 103: 232448,
              110: 232448, 120: 101376, 121: 101376}
TMEM_COLUMNS = 512          # 32-bit columns per SM (Triton: max_tmem_size)
TMEM_LANES = 128
TMEM_BYTES_PER_COLUMN = TMEM_LANES * 4
TMEM_ALLOC_ALIGNMENT = 4    # Triton's TMEM allocator starts every allocation on a multiple of 4 columns
TMEM_ALLOCATIONS = (0, 32, 64, 128, 256, 512)   # what it then allocates (`tmem_size`): the next of these
SMEM_ALLOC_ALIGNMENT = 1024  # bytes: a 128-byte-swizzled (TMA) buffer's alignment; the lowering's backings ask for it

DEFAULT_CAPABILITY = 90     # what a module without a target is checked against

_SPELLINGS = re.compile(r"(?:cuda:|sm_)?([0-9]+)a?")


def capability(target) -> int | None:
    """90 / 100 ... from "cuda:100", "sm_90a", "90", 100, or a GPUTarget; None for None. ValueError otherwise."""
    if target is None:
        return None
    if hasattr(target, "arch"):
        target = target.arch
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    m = _SPELLINGS.fullmatch(str(target))
    if not m:
        raise ValueError(f"unknown target {target!r}: use sm_90a, sm_100a, cuda:90 ... or a capability number")
    return int(m.group(1))


def smem_limit(cap: int | None) -> int:
    """Bytes of shared memory one block may use on `cap` (sm_90's figure when the target is not known)."""
    return SMEM_BYTES.get(cap if cap is not None else DEFAULT_CAPABILITY, SMEM_BYTES[DEFAULT_CAPABILITY])


def tmem_allocated(columns: int) -> int:
    """Triton's `tmem_size` for `columns` in use: rounded up to 32, 64 ... 512 (over 512 the kernel does not
    fit; Triton reports at least `columns`, 3.9 more: 576 for 516)."""
    return next((n for n in TMEM_ALLOCATIONS if columns <= n), columns)


def has_tmem(cap: int | None) -> bool:
    return cap is not None and cap >= 100
