"""The proof on function-level control flow: a runtime `return` (the body becomes blocks joined by `cf.cond_br`),
`gl.assume`, noinline helpers. Each case a helper session found by writing kernels in upstream's idioms
(2026-11-27): before the fix beside it, P7 said "proven" on a race after a runtime `return`, a `return` in a
warp_specialize worker crashed the proof, and an index guarded by a `return` or a `gl.assume`, or handed to a
noinline helper, was a P5 violation on a correct kernel.
"""
import inspect

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

import tlx_alias.language as tlx
from tlx_alias import _triton as compat
from tlx_alias.errors import TlxAliasError
from tlx_alias.kernels._common import tensordesc

HOPPER = GPUTarget("cuda", 90, 32)
SMEM = tlx.storage_kind.smem
SHARED, DISTINCT = tlx.reuse_group_type.shared, tlx.reuse_group_type.distinct
ROWS: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])

pytestmark = pytest.mark.usefixtures("plugin")


def compile_kernel(fn, constexprs, signature=None):
    sig = dict(signature or {"out_ptr": "*fp32", "n": "i32"}, **{k: "constexpr" for k in constexprs})
    return triton.compile(GluonASTSource(fn, sig, constexprs), target=HOPPER)


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn.fn)
    return f"{__file__}:{start + next(i for i, text in enumerate(lines) if marker in text)}"


@gluon.jit
def _tile(v):
    return gl.full([64, 64], v, gl.float16, ROWS)


@gluon.jit
def _out(out_ptr, t):
    gl.store(out_ptr + gl.arange(0, 64, layout=gl.SliceLayout(1, ROWS)), gl.sum(t.to(gl.float32), axis=1))


# --- a runtime `return` -----------------------------------------------------------------------------------

@gluon.jit
def return_then_reuse_kernel(out_ptr, n, RACY: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=SHARED))
    if n < 0:
        return
    a.index(0).store(_tile(1.0))
    if RACY:   # b lies on a: written over it while a's tile is still to be read
        b.index(0).store(_tile(2.0))  # LINE-CLOBBER
    _out(out_ptr, a.index(0).load(ROWS))
    b.index(0).store(_tile(3.0))
    _out(out_ptr + 64, b.index(0).load(ROWS))


def test_a_race_after_a_runtime_return_is_found():
    """P7 ran only the body's first block: everything after `if n < 0: return` went unchecked ("proven")."""
    compile_kernel(return_then_reuse_kernel, {"RACY": False})
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(return_then_reuse_kernel, {"RACY": True})
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text, text
    assert f"write of b by ttg.local_store at {line_of(return_then_reuse_kernel, 'LINE-CLOBBER')}" in text, text


@gluon.jit
def _ws_reader(a, b, out_ptr, n):
    _out(out_ptr, a.index(0).load(ROWS))


@gluon.jit
def _ws_writer(a, b, out_ptr, n, RACY: gl.constexpr):
    if n < 0:
        return
    if RACY:   # the worker writes b over a while the default partition may still read a
        b.index(0).store(_tile(2.0))  # LINE-WORKER-STORE
    else:      # registers only
        _out(out_ptr + 64, _tile(2.0))


@gluon.jit
def return_in_a_worker_kernel(out_ptr, n, RACY: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=SHARED))
    a.index(0).store(_tile(1.0))
    gl.warp_specialize([(_ws_reader, (a, b, out_ptr, n)), (_ws_writer, (a, b, out_ptr, n, RACY))], [4], [24])


def test_a_return_in_a_warp_specialize_worker_is_followed():
    """A worker with a runtime `return` has a partition region of several blocks: the proof stopped the compile
    with an internal MalformedIR ("one block expected"), where plain Triton compiles it."""
    compile_kernel(return_in_a_worker_kernel, {"RACY": False})
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(return_in_a_worker_kernel, {"RACY": True})
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text, text
    assert f"by ttg.local_store at {line_of(return_in_a_worker_kernel.__globals__['_ws_writer'], 'LINE-WORKER-STORE')}" \
        in text, text


@gluon.jit
def index_guarded_by_return_kernel(out_ptr, i, LAST: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((64, 64), gl.float16, 2, SMEM, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 2, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    if i < 0:
        return
    if i > LAST:
        return
    a.index(i).store(_tile(1.0))  # LINE-GUARDED
    _out(out_ptr, a.index(i).load(ROWS))


def test_an_index_guarded_by_a_return_is_in_range():
    """The path condition of an op after `if i > 1: return` ignored the branch: a P5 violation "i = -1" on a
    correct kernel. With the guard one too wide, the counterexample is the index the guard lets through."""
    sig = {"out_ptr": "*fp32", "i": "i32"}
    compile_kernel(index_guarded_by_return_kernel, {"LAST": 1}, sig)
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(index_guarded_by_return_kernel, {"LAST": 2}, sig)
    text = str(info.value)
    assert text.startswith(f"{line_of(index_guarded_by_return_kernel, 'LINE-GUARDED')}: error: [tlx-verify P5] "
                           "violation"), text
    assert "with i = 2" in text, text


# --- gl.assume --------------------------------------------------------------------------------------------

@gluon.jit
def assumed_index_kernel(out_ptr, i, BOUND: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((64, 64), gl.float16, 2, SMEM, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 2, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    gl.assume(i >= 0)
    gl.assume(i < BOUND)
    a.index(i).store(_tile(1.0))
    _out(out_ptr, a.index(i).load(ROWS))


def test_gl_assume_bounds_an_index():
    """`gl.assume(0 <= i < 2)` before `.index(i)` was ignored: a P5 violation "i = -1" on a correct kernel."""
    sig = {"out_ptr": "*fp32", "i": "i32"}
    compile_kernel(assumed_index_kernel, {"BOUND": 2}, sig)
    with pytest.raises(TlxAliasError, match=r"\[tlx-verify P5\] violation.*with i = 2"):
        compile_kernel(assumed_index_kernel, {"BOUND": 3}, sig)


# --- noinline helpers ---------------------------------------------------------------------------------------

@gluon.jit(noinline=True)
def _indexed_helper(out_ptr, i):
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((64, 64), gl.float16, 2, SMEM, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 2, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))
    a.index(i).store(_tile(1.0))
    _out(out_ptr, a.index(i).load(ROWS))


@gluon.jit
def noinline_index_kernel(out_ptr, n):
    _indexed_helper(out_ptr, n % 2)


def test_a_noinline_helpers_argument_is_not_a_kernel_argument(monkeypatch):
    """A noinline helper is proven on its own: its parameters were free "kernel arguments" and a correct kernel
    a P5 violation at i = -1. What the callers pass is not followed: "cannot prove", naming the helper's argument
    (a warning under `warn`, a stop with the reason under the default)."""
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(noinline_index_kernel, {})
    text = str(info.value)
    assert "[tlx-verify P5] cannot prove" in text and "argument of the noinline helper" in text, text
    monkeypatch.setenv("TLX_ALIAS_PROOF", "warn")
    compile_kernel(noinline_index_kernel, {})


@gluon.jit(noinline=True)
def _wait_helper(bar):
    mbarrier.wait(bar, 0)


@gluon.jit
def wait_in_a_helper_kernel(desc, out_ptr):
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec, layout=desc.layout)
    b = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec, layout=desc.layout)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=SHARED))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, desc.block_type.nbytes)
    compat.tma_load(desc, [0, 0], bar, a.index(0))
    _wait_helper(bar)   # the load's wait, in a helper Triton keeps as a call
    _out(out_ptr, a.index(0).load(ROWS))
    b.index(0).store(_tile(2.0))


def test_a_wait_inside_a_noinline_helper_is_cannot_prove(monkeypatch):
    """P7 took a call as doing nothing: the load's wait in the helper unseen, a correct kernel was a violation.
    A call that takes an mbarrier is "cannot prove" (a stop under `strict`, a warning under the default)."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    sig = {"desc": tensordesc("fp16", [64, 64], layout), "out_ptr": "*fp32"}
    with pytest.raises(TlxAliasError, match=r"\[tlx-verify P7\] cannot prove.*takes the mbarrier .*P7 does not "
                                            r"follow calls"):
        compile_kernel(wait_in_a_helper_kernel, {}, sig)


# --- the kernel's lines in messages about inlined helpers and statements -----------------------------------

@gluon.jit
def _put(buf, v):
    buf.index(0).store(_tile(v))  # LINE-PUT


@gluon.jit
def helper_calls_kernel(out_ptr, n):
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=SHARED))
    _put(a, 1.0)
    _put(b, 2.0)  # LINE-CALL-B: b written over a, whose tile is read below
    _out(out_ptr, a.index(0).load(ROWS))


def test_a_race_in_a_helper_names_the_kernels_call():
    """Both writes are the helper's line: the message named only that line, not which call wrote over `a`."""
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(helper_calls_kernel, {})
    text = str(info.value)
    assert f"write of b by ttg.local_store at {line_of(_put, 'LINE-PUT')} (called at " \
           f"{line_of(helper_calls_kernel, 'LINE-CALL-B')})" in text, text


@gluon.jit
def drain_kernel(out_ptr, n):
    """A persistent loop, then the ring slot of the program's last load: a program with no tile has `it` = 0."""
    spec = tlx.storage_alias_spec(storage=SMEM)
    a_ring = tlx.local_alloc((64, 64), gl.float16, 2, SMEM, reuse=spec)
    c = tlx.local_alloc((64, 64), gl.float16, 1, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a_ring, c, group_type=DISTINCT))
    it = 0
    for t in range(gl.program_id(0), n, gl.num_programs(0)):
        a_ring.index(it % 2).store(_tile(1.0))
        it += 1
    last = a_ring.index((it - 1) % 2).load(ROWS)  # LINE-DRAIN
    _out(out_ptr, last)


def test_an_index_is_named_by_its_buffer_and_expression():
    """Triton names every op of `last = a_ring.index((it - 1) % 2).load(...)` `last`: the message said "last:
    logical index last % 2", and "cannot prove" (the runs that confirm a counterexample ran program 0 of 1 with
    the counterexample's arguments only for buffers the kernel allocates by hand)."""
    with pytest.raises(TlxAliasError) as info:
        compile_kernel(drain_kernel, {})
    text = str(info.value)
    assert (f"[tlx-verify P5] violation: a_ring: logical index (it - 1) % 2 in [0, 2) at "
            f"{line_of(drain_kernel, 'LINE-DRAIN')}") in text, text
    assert "= -1" in text and "on a run with n = " in text, text
