"""The under-use hint (seed 000, "Under-Utilization Warning"): sharing the kernel would fit without.

Sharing buys room, and costs ordering: P may only overwrite S once S has been read, and so on. When the
whole kernel, as Triton placed it, would still fit the SM with one buffer on bytes of its own, the author
may rather have those bytes (e.g. attention at HEAD_DIM=64 leaves 128 TMEM columns of the 512 unused, enough
for P). `tlx-size-definition` records per spec what giving each buffer that overlaps another its own
allocation would cost (`Separation`: sizes from `tlx_alias.layout`, the spec's own rules); after Triton's
`llir` stage, `hint` adds that to the kernel's totals and warns at the spec's line for each one that fits.
`TLX_ALIAS_UNDERUSE=off` silences it.

What "fits" means is an upper bound on what Triton would allocate after the change:
- SMEM: `metadata["shared"]` (Triton's exact total) + the new allocation, rounded up to
  `targets.SMEM_ALLOC_ALIGNMENT`, + the spec's change in size (the spec shrinks or stays);
- TMEM: Triton's `tmem_size` is rounded up to a power of two, so the columns in use are counted from the
  module's TMEM allocations, each rounded up to `targets.TMEM_ALLOC_ALIGNMENT` (liveness may let Triton
  use fewer, never more), and the new allocation is counted the same way.
A hint may therefore be missed (a buffer Triton's liveness would have fitted), never claimed wrongly.
"""
from __future__ import annotations

from dataclasses import dataclass

from tlx_alias import layout, targets
from tlx_alias.errors import env_mode, warn_at

ENV = "TLX_ALIAS_UNDERUSE"
MODES = ("on", "off")


@dataclass(frozen=True)
class Separation:
    """One buffer of a spec that overlaps another, and the spec's size with and without it (spec units)."""
    spec_src: str | None
    storage: str           # "smem" | "tmem"
    name: str              # the buffer's Python name
    src: str | None        # its local_alloc line
    num: int               # buffers
    buffer: int            # units per buffer
    spec_units: int        # the spec as laid out now
    spec_units_without: int  # the spec with this buffer taken out of its tree

    @property
    def own(self) -> int:
        return self.num * self.buffer

    def extra(self) -> int:
        """Units the kernel would need on top of today's total, as Triton would round the allocations."""
        a = targets.TMEM_ALLOC_ALIGNMENT if self.storage == "tmem" else targets.SMEM_ALLOC_ALIGNMENT
        return (layout.align_up(self.own, a) + layout.align_up(self.spec_units_without, a)
                - layout.align_up(self.spec_units, a))


def mode_from_env() -> str:
    return env_mode(ENV, MODES, "on", "tlx-alias under-use")


def tmem_in_use(allocation_columns, tmem_size: int) -> int:
    """Upper bound on the TMEM columns Triton's allocator used: the module's allocations laid end to end,
    each from a 4-column boundary; Triton's own (rounded) figure if that is larger once rounded, which
    means something this count did not see was allocated."""
    counted = sum(layout.align_up(c, targets.TMEM_ALLOC_ALIGNMENT) for c in allocation_columns)
    return counted if targets.tmem_allocated(counted) >= tmem_size else tmem_size


def hint(separations, metadata, target, tmem_columns=()) -> list:
    """After Triton placed every buffer: warn at each spec's line with the separations that still fit.

    `tmem_columns`: the columns of every TMEM allocation of the lowered module. Returns the messages.
    """
    if mode_from_env() == "off" or not separations:
        return []
    smem_limit = targets.smem_limit(targets.capability(target))
    used = {"smem": metadata.get("shared", 0) or 0,
            "tmem": tmem_in_use(tmem_columns, metadata.get("tmem_size", 0) or 0)}
    limit = {"smem": smem_limit, "tmem": targets.TMEM_COLUMNS}
    by_spec: dict = {}
    for sep in separations:
        if used[sep.storage] + sep.extra() <= limit[sep.storage]:
            by_spec.setdefault((sep.spec_src, sep.storage), []).append(sep)
    messages = []
    for (spec_src, storage), fits in by_spec.items():
        message = _message(storage, fits, used[storage], limit[storage], metadata.get("tmem_size", 0) or 0)
        warn_at(spec_src, message)
        messages.append(message)
    return messages


def _message(storage, fits, used, limit, tmem_size) -> str:
    unit = "columns" if storage == "tmem" else "bytes"
    now = f"{used} of {limit} {unit} in use" + (f" (Triton allocates {tmem_size})" if storage == "tmem" else "")
    options = []
    for sep in fits:
        after = used + sep.extra()
        grows = storage == "tmem" and targets.tmem_allocated(after) != tmem_size
        rounded = ""
        if sep.extra() > sep.own:   # the allocation's start rounded up as Triton does
            rounded = (f", from a {targets.TMEM_ALLOC_ALIGNMENT}-column boundary" if storage == "tmem" else
                       f", rounded up to {targets.SMEM_ALLOC_ALIGNMENT} bytes")
        options.append(f"`{sep.name}`{_line(sep.src, sep.spec_src)}: +{sep.extra()} {unit} "
                       f"({sep.num} x {sep.buffer}{rounded}), {after} of {limit} in use"
                       + (f", Triton would allocate {targets.tmem_allocated(after)}" if grows else "")
                       + f", {limit - after} free")
    what = "tensor memory" if storage == "tmem" else "shared memory"
    return (f"[tlx-alias under-use] {what}: {now}, so this spec shares more than the kernel needs to fit. "
            "Giving one of its buffers an allocation of its own (local_alloc without reuse=, and out of the "
            "set_buffer_overlap tree) would still fit: " + "; ".join(options)
            + f". Keep the sharing if you want the room; {ENV}=off silences this hint")


def _line(src, spec_src) -> str:
    """" (line N)" for a buffer in the spec's file, " (file:N)" otherwise."""
    if not src:
        return ""
    file, _, line = src.rpartition(":")
    return f" (line {line})" if spec_src and spec_src.rpartition(":")[0] == file else f" ({src})"
