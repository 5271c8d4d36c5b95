"""P7 as another program of the grid: each run is program 0 of 1, and the first run that completes runs again as
program 1 of 2. A persistent kernel's program 0 of 1 walks every tile, so a hazard that depends on which tiles a
program gets (a phase taken from the tile id instead of the program's own count of loads) or on a branch on the
program id was "proven" before this run.
"""
import inspect
import re

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
from tlx_alias.verify import temporal
from ir_text import proof_report

HOPPER = GPUTarget("cuda", 90, 32)
SMEM = tlx.storage_kind.smem
BLOCKED: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])

pytestmark = pytest.mark.usefixtures("plugin")


@gluon.jit
def _a_over_c(a_desc):
    """`a` and `c`, one tile each of a's descriptor, on the same bytes (a spec of two buffers), and an mbarrier."""
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((BM, BK), gl.float16, 1, SMEM, reuse=spec, layout=a_desc.layout)
    c = tlx.local_alloc((BM, BK), gl.float16, 1, SMEM, reuse=spec, layout=a_desc.layout)
    spec.set_buffer_overlap(tlx.reuse_group(a, c, group_type=tlx.reuse_group_type.shared))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    return a, c, bar


@gluon.jit
def persistent_tiles_kernel(a_desc, out_ptr, n_tiles, BUG: gl.constexpr):
    """Each program loads its tiles (`range(pid, n_tiles, num_programs)`) into `a` by TMA and writes its result
    into `c`, which shares a's bytes: `c` may be written only once the wait saw the load land."""
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    a, c, bar = _a_over_c(a_desc)
    idle = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(idle, count=1)
    pid = gl.program_id(0)
    loads = 0
    for t in range(pid, n_tiles, gl.num_programs(0)):
        mbarrier.expect(bar, a_desc.block_type.nbytes)
        compat.tma_load(a_desc, [t * BM, 0], bar, a.index(0))
        if BUG == "tile_parity":   # the tile's parity, not this program's count of loads: right for program 0
            phase = t & 1          # of 1 only; program 1 of 2 waits on parity 1 first, which returns at once
        else:
            phase = loads & 1
        if BUG == "tail_programs":
            if pid >= 2:                 # programs 2 and above: c written while the load into a's bytes lands
                c.index(0).store(gl.full([BM, BK], 0.0, gl.float16, BLOCKED))  # LINE-EARLY
        if BUG == "upper_triangle":
            if gl.program_id(1) > pid:   # above a 2-D grid's diagonal: c written while the load into a lands
                c.index(0).store(gl.full([BM, BK], 0.0, gl.float16, BLOCKED))  # LINE-ABOVE
        if BUG == "hang_off_program_0":
            if pid > 0:
                mbarrier.wait(idle, 0)   # LINE-IDLE: nothing arrives on `idle`
        mbarrier.wait(bar, phase)
        x = a.index(0).load(BLOCKED)
        if BUG == "far_programs":
            if pid >= 1000:              # programs no run is: P7's runs and grids stay below 512
                c.index(0).store(x * 3)  # LINE-TAIL
        c.index(0).store(x * 2)  # LINE-EPILOGUE
        y = c.index(0).load(BLOCKED)
        rows = t * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, BLOCKED))
        gl.store(out_ptr + rows, gl.sum(y.to(gl.float32), axis=1))
        loads += 1


def _compile(bug):
    layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    sig = {"a_desc": tensordesc("fp16", [64, 64], layout), "out_ptr": "*fp32", "n_tiles": "i32", "BUG": "constexpr"}
    return triton.compile(GluonASTSource(persistent_tiles_kernel, sig, {"BUG": bug}), target=HOPPER)


def _line(marker):
    lines, start = inspect.getsourcelines(persistent_tiles_kernel.fn)
    return f"{__file__}:{start + next(i for i, text in enumerate(lines) if marker in text)}"


def test_a_phase_from_the_tile_id_is_a_race_as_program_1_of_2(monkeypatch):
    """Program 0 of 1 gets tiles 0, 1, 2, ... and `t & 1` is its count of loads; program 1 of 2 gets 1, 3, ...
    and waits on parity 1 of a fresh barrier, which returns before the load lands: `a` is read and `c`
    written over bytes the TMA load still writes."""
    monkeypatch.setenv("TLX_ALIAS_P7_MIXED", "0")
    with pytest.raises(TlxAliasError) as info:
        _compile("tile_parity")
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text and "by ttng.async_tma_copy_global_to_local" in text, text
    assert "(bounded run, integer arguments = 256 as program 1 of 2)" in text, text


def test_the_correct_kernel_is_proven_as_either_program(monkeypatch):
    """The count of this program's own loads gives the phase: no violation and no "cannot prove" on any run
    (under `strict` either stops the compile)."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    assert _compile("none").asm["ttgir"]


def test_a_hang_only_as_another_program_is_cannot_prove(monkeypatch):
    """Program 0 of 1 completes; as program 1 of 2 every thread waits on a barrier nothing arrives on: P7 does
    not call that "outside the kernel's domain" (as it does for arguments too small), it cannot prove."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    with pytest.raises(TlxAliasError) as info:
        _compile("hang_off_program_0")
    text = str(info.value)
    assert "[tlx-verify P7] cannot prove" in text, text
    assert "integer arguments = 256 as program 1 of 2 deadlocked, while the run as program 0 of 1 completed" \
        in text, text
    assert _line("LINE-IDLE") in text, text


def test_an_access_no_run_reaches_is_cannot_prove(monkeypatch):
    """A store into the spec under `if pid >= 1000`: no run executes it (nor one aimed at it: grids up to 512),
    so its order against the other accesses was never seen ("proven" before, as a racy order there was)."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
    with pytest.raises(TlxAliasError) as info:
        _compile("far_programs")
    text = str(info.value)
    assert "[tlx-verify P7] cannot prove" in text, text
    assert f"never ran the ttg.local_store at {_line('LINE-TAIL')}, which access spec0 or signal" in text, text


@gluon.jit
def k_loop_kernel(a_desc, out_ptr, n_tiles, k_tiles, GLOBAL_COUNT: gl.constexpr):
    """A persistent kernel loading `k_tiles` blocks a tile into `a` (its sum goes out through `c`, on a's
    bytes). GLOBAL_COUNT takes the phase from the count of loads program 0 of 1 makes (`t * k_tiles + ki`), not
    from this program's own: right for every program when k_tiles is even, wrong for program 1 of 2 when it is
    odd (its first load is then the 7th of program 0 of 1 at 7: a wait on parity 1 of a fresh barrier)."""
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    a, c, bar = _a_over_c(a_desc)
    loads = 0
    for t in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
        acc = gl.full([BM, BK], 0.0, gl.float32, BLOCKED)
        for ki in range(k_tiles):
            mbarrier.expect(bar, a_desc.block_type.nbytes)
            compat.tma_load(a_desc, [t * BM, ki * BK], bar, a.index(0))
            if GLOBAL_COUNT:
                phase = (t * k_tiles + ki) & 1
            else:
                phase = loads & 1
            mbarrier.wait(bar, phase)
            acc += a.index(0).load(BLOCKED).to(gl.float32)  # LINE-READ
            loads += 1
        c.index(0).store(acc.to(gl.float16))
        rows = t * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, BLOCKED))
        gl.store(out_ptr + rows, gl.sum(c.index(0).load(BLOCKED).to(gl.float32), axis=1))


def _compile_k_loop(global_count):
    layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    sig = {"a_desc": tensordesc("fp16", [64, 64], layout), "out_ptr": "*fp32", "n_tiles": "i32", "k_tiles": "i32",
           "GLOBAL_COUNT": "constexpr"}
    return triton.compile(GluonASTSource(k_loop_kernel, sig, {"GLOBAL_COUNT": global_count}), target=HOPPER)


def test_every_value_runs_as_another_program(monkeypatch):
    """The race shows as program 1 of 2 at an odd argument only: the first value's run (256) as program 1 of 2
    alone said "proven"."""
    monkeypatch.setenv("TLX_ALIAS_P7_MIXED", "0")
    report = proof_report(_compile_k_loop(False).asm["ttgir"])
    (p7,) = [v for v in report.verdicts if v.prop == "P7"]
    # (n_tiles = k_tiles = 256 is over the op budget: 16, 24, ... run instead, and not as program 1 of 2)
    first, other = re.search(r"integer arguments = ([\d, ]+); as program 1 of 2: ([\d, ]+)", p7.check).groups()
    given = [v for v in first.split(", ") if int(v) in temporal.RUNS]
    assert p7.status == "proven" and other.split(", ") == given and "7" in given, p7
    with pytest.raises(TlxAliasError) as info:
        _compile_k_loop(True)
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text and "(bounded run, integer arguments = 7 as program 1 of 2)" in text
    lines, start = inspect.getsourcelines(k_loop_kernel.fn)
    read = f"{__file__}:{start + next(i for i, t in enumerate(lines) if 'LINE-READ' in t)}"
    assert f"read of a by ttg.local_load at {read}" in text, text


@gluon.jit
def one_tile_kernel(a_desc, out_ptr):
    """One tile a program: the program id only offsets the TMA load and the output pointer."""
    BM: gl.constexpr = a_desc.block_type.shape[0]
    a, c, bar = _a_over_c(a_desc)
    t = gl.program_id(0)
    mbarrier.expect(bar, a_desc.block_type.nbytes)
    compat.tma_load(a_desc, [t * BM, 0], bar, a.index(0))
    mbarrier.wait(bar, 0)
    c.index(0).store(a.index(0).load(BLOCKED) * 2)
    rows = t * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, BLOCKED))
    gl.store(out_ptr + rows, gl.sum(c.index(0).load(BLOCKED).to(gl.float32), axis=1))


def test_a_program_id_that_only_addresses_needs_no_other_program():
    """As program 1 of 2 a run would execute the same ops in the same order (P7 reads no address): not run."""
    layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    sig = {"a_desc": tensordesc("fp16", [64, 64], layout), "out_ptr": "*fp32"}
    report = proof_report(triton.compile(GluonASTSource(one_tile_kernel, sig, {}), target=HOPPER).asm["ttgir"])
    (p7,) = [v for v in report.verdicts if v.prop == "P7"]
    assert p7.status == "proven" and "program 1 of 2" not in p7.check, p7
    assert f"on {len(temporal.RUNS)} bounded runs" in p7.check, p7


def test_a_branch_programs_0_and_1_skip_runs_as_the_last_program():
    """Under `if pid >= 2` neither program 0 of 1 nor 1 of 2 runs the store; where an op would go unrun, each
    value runs again as the last program of a grid of that many (256 as program 255 of 256), which takes it."""
    with pytest.raises(TlxAliasError) as info:
        _compile("tail_programs")
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text and f"write of c by ttg.local_store at {_line('LINE-EARLY')}" in text
    assert "(bounded run, integer arguments = 256 as program 255 of 256)" in text, text


def test_a_branch_between_axes_gets_a_run_aimed_at_it():
    """Every run gives each axis the same program, so none takes `program_id(1) > program_id(0)` (a helper's
    lower-triangular SYRK-like grid, "proven" on a race there): Z3 solves the store's path condition for a
    program per axis, and the run with it shows the race."""
    with pytest.raises(TlxAliasError) as info:
        _compile("upper_triangle")
    text = str(info.value)
    assert "[tlx-verify P7] violation" in text and f"write of c by ttg.local_store at {_line('LINE-ABOVE')}" in text
    program = re.search(r"as program \((\d+), (\d+), \d+\) of \(\d+, \d+, \d+\)\)", text)
    assert program and int(program.group(2)) > int(program.group(1)), text


@gluon.jit
def _idle_default(out_ptr):
    pass


@gluon.jit
def _pid_worker(a_desc, a, c, bar, out_ptr, pid, PHASE_FROM_PID: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    mbarrier.expect(bar, a_desc.block_type.nbytes)
    compat.tma_load(a_desc, [pid * BM, 0], bar, a.index(0))
    if PHASE_FROM_PID:   # parity 1 for odd programs: a wait on a fresh barrier that returns before the load lands
        phase = pid & 1
    else:
        phase = 0
    mbarrier.wait(bar, phase)
    c.index(0).store(a.index(0).load(BLOCKED) * 2)
    rows = pid * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, BLOCKED))
    gl.store(out_ptr + rows, gl.sum(c.index(0).load(BLOCKED).to(gl.float32), axis=1))


@gluon.jit
def captured_program_kernel(a_desc, out_ptr, PHASE_FROM_PID: gl.constexpr):
    """The program id reaches the worker as a warp_specialize capture: followed into the partition, where it
    is a phase (the kernel then runs as program 1 of 2), not only an address."""
    a, c, bar = _a_over_c(a_desc)
    gl.warp_specialize([(_idle_default, (out_ptr, )),
                        (_pid_worker, (a_desc, a, c, bar, out_ptr, gl.program_id(0), PHASE_FROM_PID))], [4], [24])


def test_a_program_id_captured_by_a_partition_is_followed():
    layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    sig = {"a_desc": tensordesc("fp16", [64, 64], layout), "out_ptr": "*fp32", "PHASE_FROM_PID": "constexpr"}
    ok = triton.compile(GluonASTSource(captured_program_kernel, sig, {"PHASE_FROM_PID": False}), target=HOPPER)
    (p7,) = [v for v in proof_report(ok.asm["ttgir"]).verdicts if v.prop == "P7"]
    assert p7.status == "proven" and "program 1 of 2" not in p7.check, p7   # an address only: one program
    with pytest.raises(TlxAliasError) as info:
        triton.compile(GluonASTSource(captured_program_kernel, sig, {"PHASE_FROM_PID": True}), target=HOPPER)
    assert "(bounded run, integer arguments = 256 as program 1 of 2)" in str(info.value), str(info.value)
