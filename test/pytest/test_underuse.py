"""The under-use hint (seed 000, "Under-Utilization Warning"): a spec that shares more than the kernel needs.

Each case compiles a kernel with sharing and the variant the hint proposes (the buffer allocated without
`reuse=`, out of the tree) for real, on the CPU, and checks the hint's figures against the variant's
`metadata` (`tmem_size`, `shared`), and the hand count in the comments against both.
"""
import re
import warnings

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, allocate_tensor_memory

import tlx_alias.language as tlx
from tlx_alias import _triton as compat
from tlx_alias import layout, targets, underuse
from tlx_alias.errors import TlxAliasError, TlxAliasWarning

HOPPER = GPUTarget("cuda", 90, 32)
BLACKWELL = GPUTarget("cuda", 100, 32)
BLOCKED = gl.constexpr(gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))   # a global of a JIT function (3.6 needs the wrapper)


@pytest.fixture(autouse=True)
def hints_on(plugin, monkeypatch):
    monkeypatch.delenv("TLX_ALIAS_UNDERUSE", raising=False)


def compile_kernel(fn, constexprs, target):
    sig = dict({"out_ptr": "*fp32"}, **{k: "constexpr" for k in constexprs})
    return triton.compile(GluonASTSource(fn, sig, constexprs), target=target)


def under_use(fn, constexprs, target):
    """Compile; return (kernel, the under-use warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        k = compile_kernel(fn, constexprs, target)
    return k, [w for w in caught if issubclass(w.category, TlxAliasWarning) and "under-use" in str(w.message)]


def _line_of(marker):
    with open(__file__) as f:
        return next(n for n, line in enumerate(f, 1) if line.rstrip().endswith(marker))


def option(message, name):
    """(line, extra units, in use after, free after) of `name`'s entry in a hint."""
    m = re.search(rf"`{name}` \(line (\d+)\): \+(\d+) (?:columns|bytes) \([^)]*\), (\d+) of \d+ in use"
                  rf"(?:, Triton would allocate \d+)?, (\d+) free", message)
    assert m, message
    return tuple(int(g) for g in m.groups())


# ---------------------------------------------------------------------------------------------- layout

def test_only_buffers_that_meet_another_are_offered():
    """shared(c 100 B, distinct(b 100 B, a 50 B)): b at 0 (on c), a at 128 (distinct children start on 128-byte
    boundaries), past c's 100 bytes. a shares nothing, so separating it would undo nothing: not a candidate."""
    c, b, a = layout.Leaf("c", 100, 1), layout.Leaf("b", 100, 1), layout.Leaf("a", 50, 1)
    tree = layout.Group(None, "shared", 1, [c, layout.Group(None, "distinct", 1, [b, a])])
    assert [leaf.ref for leaf in layout.overlapping(tree, "smem")] == ["c", "b"]
    # Without b: shared(c, distinct(a)) is max(100, 50) = 100 bytes, stride 128; before: 128 + 50 = 178 -> 256.
    assert layout.total(layout.without(tree, b), "smem") == 128 and layout.total(tree, "smem") == 256


# ---------------------------------------------------------------------------------------------- TMEM

@gluon.jit
def tmem_kernel(out_ptr, EXTRA: gl.constexpr, SEPARATE: gl.constexpr):
    # qk: 128 x 128 fp32 = 128 columns; p: 128 x 128 bf16, two per 32-bit column = 64 columns.
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)  # @tmem-spec
    qk = tlx.local_alloc((128, 128), gl.float32, 1, tlx.storage_kind.tmem, reuse=spec)
    if SEPARATE:   # what the hint proposes: p on columns of its own
        p = tlx.local_alloc((128, 128), gl.bfloat16, 1, tlx.storage_kind.tmem)
        spec.set_buffer_overlap(tlx.reuse_group(qk))
    else:
        p = tlx.local_alloc((128, 128), gl.bfloat16, 1, tlx.storage_kind.tmem, reuse=spec)  # @tmem-p
        spec.set_buffer_overlap(tlx.reuse_group(qk, p, group_type=tlx.reuse_group_type.shared))
    o = tlx.local_alloc((128, 256), gl.float32, 1, tlx.storage_kind.tmem)       # 256 columns
    x = tlx.local_alloc((128, EXTRA), gl.float32, 1, tlx.storage_kind.tmem)     # EXTRA columns
    # Every buffer is read at the end, so all of them are live together (Triton cannot reuse columns).
    qk_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, 128], qk.type.layout, 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [128, 128], p.type.layout, 4)
    o_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, 256], o.type.layout, 4)
    x_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, EXTRA], x.type.layout, 4)
    rows: gl.constexpr = gl.SliceLayout(1, qk_reg)
    acc = gl.sum(qk.index(0).load(qk_reg), axis=1)
    acc += gl.convert_layout(gl.sum(p.index(0).load(p_reg).to(gl.float32), axis=1), rows)
    acc += gl.convert_layout(gl.sum(o.index(0).load(o_reg), axis=1), rows)
    acc += gl.convert_layout(gl.sum(x.index(0).load(x_reg), axis=1), rows)
    gl.store(out_ptr + gl.arange(0, 128, layout=rows), acc)


def test_tmem_hint_when_separating_fits():
    """EXTRA = 64: in use 128 (qk, p on it) + 256 + 64 = 448 columns (Triton allocates 512). Giving p its own
    64 columns: 448 + 64 = 512 of 512, 0 free -- the separated variant's tmem_size must read 512."""
    k, hints = under_use(tmem_kernel, {"EXTRA": 64, "SEPARATE": False}, BLACKWELL)
    assert k.metadata.tmem_size == 512
    assert len(hints) == 1, [str(w.message) for w in hints]
    hint = hints[0]
    assert (hint.filename, hint.lineno) == (__file__, _line_of("# @tmem-spec"))
    message = str(hint.message)
    assert "448 of 512 columns in use (Triton allocates 512)" in message
    separated = compile_kernel(tmem_kernel, {"EXTRA": 64, "SEPARATE": True}, BLACKWELL)
    assert option(message, "p") == (_line_of("# @tmem-p"), 64, separated.metadata.tmem_size,
                                    512 - separated.metadata.tmem_size)
    assert option(message, "p") == (_line_of("# @tmem-p"), 64, 512, 0)


def test_tmem_no_hint_when_separating_does_not_fit():
    """EXTRA = 128: in use 128 + 256 + 128 = 512; giving p its own 64 columns needs 576 > 512 (the separated
    variant is a capacity error naming 576)."""
    k, hints = under_use(tmem_kernel, {"EXTRA": 128, "SEPARATE": False}, BLACKWELL)
    assert k.metadata.tmem_size == 512
    assert hints == []
    with pytest.raises(TlxAliasError, match=r"needs 576 tensor-memory columns"):
        compile_kernel(tmem_kernel, {"EXTRA": 128, "SEPARATE": True}, BLACKWELL)


def test_knob_off_silences_the_hint(monkeypatch):
    monkeypatch.setenv("TLX_ALIAS_UNDERUSE", "off")
    _, hints = under_use(tmem_kernel, {"EXTRA": 64, "SEPARATE": False}, BLACKWELL)
    assert hints == []


def test_knob_rejects_an_unknown_value(monkeypatch):
    monkeypatch.setenv("TLX_ALIAS_UNDERUSE", "quiet")
    with pytest.raises(TlxAliasError, match=r"TLX_ALIAS_UNDERUSE='quiet' is not one of on, off"):
        compile_kernel(tmem_kernel, {"EXTRA": 64, "SEPARATE": False}, BLACKWELL)


@gluon.jit
def tmem_alignment_kernel(out_ptr, N: gl.constexpr):
    # Plain Gluon (no plugin): a: 2 x (128 x 1 fp32) = 2 columns, allocated first; then 256 + 128 + N columns.
    a = allocate_tensor_memory(gl.float32, [2, 128, 1], TensorMemoryLayout((128, 1), col_stride=1))
    b = allocate_tensor_memory(gl.float32, [1, 128, 256], TensorMemoryLayout((128, 256), col_stride=1))
    c = allocate_tensor_memory(gl.float32, [1, 128, 128], TensorMemoryLayout((128, 128), col_stride=1))
    d = allocate_tensor_memory(gl.float32, [1, 128, N], TensorMemoryLayout((128, N), col_stride=1))
    a_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, 1], a.type.layout, 4)
    b_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, 256], b.type.layout, 4)
    c_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, 128], c.type.layout, 4)
    d_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [128, N], d.type.layout, 4)
    rows: gl.constexpr = gl.SliceLayout(1, b_reg)
    acc = gl.sum(b.index(0).load(b_reg), axis=1)
    acc += gl.convert_layout(gl.sum(a.index(0).load(a_reg) + a.index(1).load(a_reg), axis=1), rows)
    acc += gl.convert_layout(gl.sum(c.index(0).load(c_reg), axis=1), rows)
    acc += gl.convert_layout(gl.sum(d.index(0).load(d_reg), axis=1), rows)
    gl.store(out_ptr + gl.arange(0, 128, layout=rows), acc)


def test_triton_tmem_allocation_rules_the_hint_relies_on():
    """What `tmem_in_use` counts against what Triton allocates. N = 32: a's 2 columns from a 4-column
    boundary, then 256 + 128 + 32: 4 + 416 = 420 columns in use, allocated as 512 (`tmem_allocated`).
    N = 128: 4 + 512 = 516 in use (Triton's IR after allocation, read with MLIR_ENABLE_DUMP on 3.9: a at
    column 0, the next allocation at 4, the last at 260), which Triton reports as at least 516."""
    under = compile_kernel(tmem_alignment_kernel, {"N": 32}, BLACKWELL)
    assert underuse.tmem_in_use([2, 256, 128, 32], 0) == 420
    assert under.metadata.tmem_size == targets.tmem_allocated(420) == 512
    over = compile_kernel(tmem_alignment_kernel, {"N": 128}, BLACKWELL)
    assert underuse.tmem_in_use([2, 256, 128, 128], 0) == 516
    assert over.metadata.tmem_size >= 516


# ---------------------------------------------------------------------------------------------- SMEM

@gluon.jit
def smem_kernel(out_ptr, BIG: gl.constexpr, SEPARATE: gl.constexpr):
    # a: 2 x 64 x 64 fp32 = 32768 bytes; b: 2 x 64 x 64 bf16 = 16384 bytes, on a's bytes.
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)  # @smem-spec
    a = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)
    if SEPARATE:
        b = tlx.local_alloc((64, 64), gl.bfloat16, 2, tlx.storage_kind.smem)
        spec.set_buffer_overlap(tlx.reuse_group(a))
    else:
        b = tlx.local_alloc((64, 64), gl.bfloat16, 2, tlx.storage_kind.smem, reuse=spec)  # @smem-b
        spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.shared))
    # BIG x 64 x 64 fp32 = BIG x 16384 bytes beside them
    big = gl.allocate_shared_memory(gl.float32, [BIG, 64, 64], gl.NVMMASharedLayout.get_default_for([64, 64],
                                                                                                    gl.float32))
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, BLOCKED))
    offs = gl.expand_dims(rows, 1) * 64 + gl.expand_dims(cols, 0)
    acc = gl.zeros([64, 64], gl.float32, BLOCKED)
    for i in gl.static_range(2):
        acc += a.index(i).load(BLOCKED) + b.index(i).load(BLOCKED).to(gl.float32)
    for j in gl.static_range(BIG):
        acc += big.index(j).load(BLOCKED)
    gl.store(out_ptr + offs, acc)


def test_smem_hint_with_the_bytes_the_separated_kernel_takes():
    """BIG = 10: 32768 (a, b on it) + 163840 = 196608 data bytes; b on bytes of its own adds 16384 = 212992,
    under 232448. The hint's figure must be the separated variant's metadata.shared."""
    k, hints = under_use(smem_kernel, {"BIG": 10, "SEPARATE": False}, HOPPER)
    assert len(hints) == 1, [str(w.message) for w in hints]
    hint = hints[0]
    assert (hint.filename, hint.lineno) == (__file__, _line_of("# @smem-spec"))
    message = str(hint.message)
    assert f"{k.metadata.shared} of 232448 bytes in use" in message
    separated = compile_kernel(smem_kernel, {"BIG": 10, "SEPARATE": True}, HOPPER)
    assert separated.metadata.shared - k.metadata.shared == 16384
    assert option(message, "b") == (_line_of("# @smem-b"), 16384, separated.metadata.shared,
                                    232448 - separated.metadata.shared)


def test_smem_no_hint_when_separating_does_not_fit():
    """BIG = 12: 32768 + 196608 = 229376 data bytes; b's own 16384 would make 245760 > 232448 (the
    separated variant is a capacity error)."""
    k, hints = under_use(smem_kernel, {"BIG": 12, "SEPARATE": False}, HOPPER)
    assert k.metadata.shared >= 229376
    assert hints == []
    with pytest.raises(TlxAliasError, match=r"shared memory"):
        compile_kernel(smem_kernel, {"BIG": 12, "SEPARATE": True}, HOPPER)
