"""P7, the temporal proof (verify/temporal.py): both sides on real kernels, seeded bugs and IR mutations.

Seeded kernels: test/tools/p7_seeded.py (hand-aliased Gluon kernels, one synchronization slip per flag),
compiled on the CPU. Mutations: the lowered IR of kernels/hopper_gemm.py with one wait weakened.
"""
import gc
import re

import pytest

import p7_seeded  # test/tools, on the path through conftest.py
from tlx_alias.errors import TlxAliasError, TlxAliasWarning
from tlx_alias.verify import enforce, model, prove_module, temporal
from tlx_alias.verify.cli import trace_text
from tlx_alias.verify.source import load_triton

# (kernel, bug) -> the two ops of the counterexample (first access, second access), by source-line pattern of
# the seeded kernel; None: P7 proves the kernel; "missed": a slip P7 does not see (README, P7 limits).
SEEDED = {
    ("ring_epilogue", "none"): None,
    ("ring_epilogue", "drop_wgmma_wait"): ("ttng.warp_group_dot", "ttg.local_store"),
    ("ring_epilogue", "load_before_store_wait"): ("ttng.async_tma_copy_local_to_global",
                                                 "ttng.async_tma_copy_global_to_local"),
    ("ring_epilogue", "read_before_wait"): ("ttng.async_tma_copy_global_to_local", "ttg.local_load"),
    # the wait on the previous parity returns once the slot's previous load landed: the wgmma reads its slot
    # while the load into it is still in flight (one view's own bytes; the epilogue writing c_smem over A[0]
    # during this tile's last load is reported beside it: a wait's phase is not merged with the next
    # arrival's, Sim.settle)
    ("ring_epilogue", "wrong_parity"): ("ttng.async_tma_copy_global_to_local", "ttng.warp_group_dot"),
    # the expect counts A's 16 KiB only: the phase completes once any 16 KiB of the stage's 24 land, the wgmma
    # reads a tile still landing (it said "proven": P7 landed the loads whole in issue order, B's first, and the
    # phase completed after both)
    ("ring_epilogue", "expect_a_only"): ("ttng.async_tma_copy_global_to_local", "ttng.warp_group_dot"),
    # a race only with one K block a tile and two tiles or more: no run with n_tiles = k_tiles shows it (README,
    # what P7 misses); the mixed runs do (test_mixed_runs_find_a_race_only_arguments_apart_show)
    ("ring_epilogue", "store_wait_by_slot"): "missed",
    # the last wgmma reads slot (k_tiles - 1) % 4 while the epilogue writes slot 1: a race only for k_tiles % 4
    # == 2, which no run of 256, 384 or 7 reaches (P7 said "proven" before the runs of 6 and 5)
    ("ring_last_slot", "none"): None,
    ("ring_last_slot", "drop_wgmma_wait"): ("ttng.warp_group_dot", "ttg.local_store"),
    # the same over cdiv(K, 64) blocks with the epilogue on slot 2: a race only for cdiv(K, 64) % 4 == 3, which
    # no run of 256, 384, 7, 6 or 5 reaches (4, 6 and 1 blocks: P7 said "proven" before the runs of 192 and 128)
    ("ring_block_slot", "none"): None,
    ("ring_block_slot", "drop_wgmma_wait"): ("ttng.warp_group_dot", "ttg.local_store"),
    # one block (the runs of 7, 6, 5) completes, two or more hang: "cannot prove" (it said "proven", the hangs
    # taken for arguments outside the kernel's domain)
    ("ring_block_slot", "wait_slot_0"): "cannot prove: deadlocked",
    # the epilogue tile (the borrowed slot) is written only past 1000 blocks: no run reaches the shared bytes,
    # "cannot prove" (it gave no P7 verdict at all: one view accessed on the runs, nothing to pair)
    ("ring_block_slot", "epilogue_unreached"): "cannot prove: the sharing was never exercised",
    # the epilogue tile on every run, a second borrowed slot only past 1000 blocks: the runs order the first
    # against the ring, never the second, "cannot prove" (it said "proven", on two views of three)
    ("ring_block_slot", "second_tile_unreached"): "cannot prove: the sharing was never exercised",
    # the A ring is two `.slice` halves of one allocation: the wgmma of step k - 1 still reads the half step k + 1
    # loads into, a hazard within one view (it said "proven": P7 compared only accesses of two views)
    ("ring_halves", "none"): None,
    ("ring_halves", "drop_wgmma_wait"): ("ttng.warp_group_dot", "ttng.async_tma_copy_global_to_local"),
    ("s_p_alias", "none"): None,
    ("s_p_alias", "p_before_s_wait"): ("ttng.tc_gen5_mma", "ttng.tmem_store"),
    # the softmax loads S before the MMA writing it completed (one view), then stores P over it (two views)
    ("s_p_alias", "wrong_parity"): ("ttng.tc_gen5_mma", "ttng.tmem_load"),
    # an MMA without mbarriers= is asynchronous all the same (Gluon emits no wait): S read while it may still be
    # written (it said "proven": such an MMA was taken as complete when issued); with tcgen05_commit and a wait,
    # upstream's idiom, it is proven
    ("s_p_alias", "no_barrier"): ("ttng.tc_gen5_mma", "ttng.tmem_load"),
    ("s_p_alias", "commit_idiom"): None,
    ("s_p_ws", "none"): None,
    ("s_p_ws", "arrive_early"): ("ttng.tmem_store", "ttng.tc_gen5_mma"),
}


def test_every_seeded_case_has_an_expectation():
    assert set(SEEDED) == set(p7_seeded.CASES)


def _prove(text, name, target=None):
    loaded = load_triton(text, name)
    with loaded.context:
        return prove_module(loaded.module, target, loaded.aliases, name)


_compiled = {}


def _seeded(kernel, bug):
    if (kernel, bug) not in _compiled:
        _compiled[(kernel, bug)] = p7_seeded.compile_ttgir(kernel, bug)
    return _compiled[(kernel, bug)]


@pytest.mark.parametrize("kernel,bug", sorted(SEEDED))
def test_seeded(kernel, bug, capfd):
    refused = p7_seeded.refused_by_this_triton(kernel)
    if refused:   # this Triton refuses the kernel itself, with its own diagnostic
        with pytest.raises(Exception):
            _seeded(kernel, bug)
        assert refused in capfd.readouterr().err
        return
    report = _prove(_seeded(kernel, bug), f"{kernel}-{bug}.ttgir")
    p7 = [v for v in report.verdicts if v.prop == "P7"]
    assert p7, report.text()
    others = [v for v in report.violations + report.unknowns if v.prop != "P7"]
    assert not others, report.text()          # the layouts are fine: only time can be wrong
    want = SEEDED[(kernel, bug)]
    if want is None or want == "missed":
        assert all(v.status == "proven" for v in p7), report.text()
        return
    if isinstance(want, str) and want.startswith("cannot prove: "):
        assert all(v.status == "cannot prove" and want.split(": ", 1)[1] in v.detail for v in p7), report.text()
        return
    bad = [v for v in p7 if v.status == "violation"]
    assert bad, report.text()
    v = bad[0]
    assert tuple(v.data["ops"]) == want, report.text()
    # the counterexample names both ops' kernel lines and the bytes they share
    assert all(re.search(r"p7_seeded\.py:\d+", line) for line in v.data["lines"]), v.detail
    assert all(f"p7_seeded.py:{line.rsplit(':', 1)[1]}" in v.detail for line in v.data["lines"]), v.detail
    assert re.search(r"share (bytes|cols) \[\d+, \d+\)", v.detail), v.detail
    assert v.fix and v.src == v.data["lines"][1]


def test_a_phase_expecting_fewer_bytes_than_its_loads_bring_names_the_bytes():
    """The counterexample of an expect that undercounts says how many bytes the phase expects and its loads bring,
    and the fix is the expect's, not a wait's."""
    if p7_seeded.refused_by_this_triton("ring_epilogue"):
        pytest.skip("this Triton refuses ring_epilogue itself")
    report = _prove(_seeded("ring_epilogue", "expect_a_only"), "ring_epilogue-expect_a_only.ttgir")
    v = next(v for v in report.verdicts if v.prop == "P7" and v.status == "violation")
    assert "expects 16384 bytes in this phase, fewer than its TMA loads bring (at least 24576)" in v.detail, v.detail
    assert "mbarrier.expect" in v.fix, v.fix


def test_mixed_runs_find_a_race_only_arguments_apart_show(monkeypatch):
    """TLX_ALIAS_P7_MIXED=1 adds runs with one integer argument at 1 and the others at 256: n_tiles = 256 tiles of
    k_tiles = 1 block each put tile 1 on ring slot 1, whose loads do not retire tile 0's C store, and the
    epilogue writes c_smem while that store still reads it. A misspelt value is an error naming the knob."""
    if p7_seeded.refused_by_this_triton("ring_epilogue"):
        pytest.skip("this Triton refuses ring_epilogue itself")
    text = _seeded("ring_epilogue", "store_wait_by_slot")
    monkeypatch.setenv(temporal.ENV_MIXED, "1")
    report = _prove(text, "ring_epilogue-store_wait_by_slot.ttgir")
    v = next(v for v in report.verdicts if v.prop == "P7" and v.status == "violation")
    assert tuple(v.data["ops"]) == ("ttng.async_tma_copy_local_to_global", "ttg.local_store"), v.detail
    assert "integer arguments = (256, 1)" in v.detail, v.detail
    proven = _prove(_seeded("ring_epilogue", "none"), "ring_epilogue-none.ttgir")   # the correct kernel still is
    assert all(v.status == "proven" for v in proven.verdicts if v.prop == "P7"), proven.text()
    monkeypatch.setenv(temporal.ENV_MIXED, "yes")
    with pytest.raises(TlxAliasError, match=temporal.ENV_MIXED):
        _prove(text, "ring_epilogue-store_wait_by_slot.ttgir")


@pytest.mark.parametrize("kernel,value", [("ring_last_slot", 6), ("ring_block_slot", 192)])
def test_a_race_only_some_trip_counts_reach_is_found_by_a_run_of_them(kernel, value):
    """ring_last_slot's race needs k_tiles % 4 == 2: the run with every argument 6 shows it; ring_block_slot's
    needs cdiv(K, 64) % 4 == 3: the run with 192 (three blocks of 64) shows it."""
    report = _prove(_seeded(kernel, "drop_wgmma_wait"), f"{kernel}-drop_wgmma_wait.ttgir")
    bad = [v for v in report.verdicts if v.prop == "P7" and v.status == "violation"]
    assert bad and bad[0].detail.endswith(f"(bounded run, integer arguments = {value})"), report.text()


def test_a_deadlock_above_a_run_that_completed_is_not_the_kernels_domain():
    """Hangs only below every run that completed are read as arguments too small for the kernel (fewer blocks
    than a prologue assumes); a hang at 256 after the run of 1 (one block) completed is the kernel's, and P7
    says so."""
    report = _prove(_seeded("ring_block_slot", "wait_slot_0"), "ring_block_slot-wait_slot_0.ttgir")
    v = next(v for v in report.verdicts if v.prop == "P7")
    assert v.status == "cannot prove", report.text()
    assert v.detail.startswith(f"the bounded run with integer arguments = 256 deadlocked, while the run with "
                               f"{min(temporal.RUNS)} completed"), v.detail
    assert re.search(r"p7_seeded\.py:\d+", v.detail), v.detail   # the hung wait's kernel line
    ok = _prove(_seeded("ring_block_slot", "none"), "ring_block_slot-none.ttgir")
    assert all(v.status == "proven" for v in ok.verdicts if v.prop == "P7"), ok.text()


@pytest.mark.parametrize("block,rings", [(64, (2, 3, 4)), (32, (2, 3)), (128, (2, 3))])
def test_block_count_loops_end_on_every_slot_of_a_ring(block, rings):
    """A loop over the cdiv(n, block) blocks of an argument n, as in upstream's GEMMs, ends on every slot of
    a ring of these depths over P7's runs (the trip counts take every residue)."""
    for depth in rings:
        assert {-(-v // block) % depth for v in temporal.RUNS} == set(range(depth)), (block, depth, temporal.RUNS)


def test_seeded_cross_partition_names_both_partitions():
    report = _prove(_seeded("s_p_ws", "arrive_early"), "s_p_ws-arrive_early.ttgir")
    v = report.violations[0]
    assert v.data["threads"][0] == "default" and v.data["threads"][1].startswith("partition 0"), v.detail
    assert "no mbarrier wait in partition 0" in v.detail


def test_trace_prints_the_interleaving():
    report = _prove(_seeded("s_p_alias", "p_before_s_wait"), "s_p_alias-p_before_s_wait.ttgir")
    text = trace_text(report)
    lines = text.splitlines()
    assert lines[0].startswith("P7 trace s_tmem: ") and " -> " in lines[0]
    # the MMA's write of S comes before P's store in the interleaving, and the trace ends at P's store
    mma = next(k for k, ln in enumerate(lines) if "write s_tmem" in ln and "tc_gen5_mma" in ln)
    store = max(k for k, ln in enumerate(lines) if "write p_tmem" in ln and "tmem_store" in ln)
    assert mma < store == len(lines) - 1, text
    assert trace_text(_prove(_seeded("s_p_alias", "none"), "ok.ttgir")) == "P7 trace: no counterexample"


# --- the policy knob --------------------------------------------------------------------------------------

def test_violation_stops_the_compile_by_default(monkeypatch):
    loaded = load_triton(_seeded("s_p_alias", "p_before_s_wait"), "bad.ttgir")
    monkeypatch.delenv("TLX_ALIAS_PROOF", raising=False)
    with loaded.context:
        with pytest.raises(TlxAliasError, match="P7.*tmem_store"):
            enforce(loaded.module, None, loaded.aliases)


def test_cannot_prove_warns_under_error_and_stops_under_strict(monkeypatch):
    monkeypatch.setattr(temporal, "MAX_STEPS", 10)        # every run goes over its budget
    loaded = load_triton(_seeded("s_p_alias", "none"), "ok.ttgir")
    with loaded.context:
        monkeypatch.setenv("TLX_ALIAS_PROOF", "error")
        with pytest.warns(TlxAliasWarning, match="P7.*budget"):
            report = enforce(loaded.module, None, loaded.aliases)
        assert report.unknowns and not report.blocking and not report.violations
        monkeypatch.setenv("TLX_ALIAS_PROOF", "strict")
        with pytest.raises(TlxAliasError, match="P7"):
            enforce(loaded.module, None, loaded.aliases)


def test_knob_turns_p7_off(monkeypatch):
    monkeypatch.setenv("TLX_ALIAS_P7", "off")
    report = _prove(_seeded("s_p_alias", "p_before_s_wait"), "bad.ttgir")
    assert not [v for v in report.verdicts if v.prop == "P7"] and report.p7_ms == 0


# --- mutations of a real kernel's lowered IR ----------------------------------------------------------------

@pytest.fixture(scope="module")
def gemm_ttgir():
    from tlx_alias.kernels import hopper_gemm
    c = hopper_gemm.compile_gemm()
    return c.ttgir if hasattr(c, "ttgir") else c.asm["ttgir"]


def _weaken(text, op, nth):
    """The `nth` `op {pendings = 0` of the text made to leave 9 in flight (as good as dropping it)."""
    hits = [m.start() for m in re.finditer(rf"{op} [^\n]*pendings = 0", text)]
    start = hits[nth]
    end = text.index("\n", start)
    return text[:start] + text[start:end].replace("pendings = 0", "pendings = 9", 1) + text[end:]


def test_hopper_gemm_proven(gemm_ttgir):
    report = _prove(gemm_ttgir, "hopper_gemm.ttgir", "cuda:90")
    p7 = [v for v in report.verdicts if v.prop == "P7"]
    assert [v.status for v in p7] == ["proven"], report.text()
    assert "c_smem" in p7[0].check and "b_ring" in p7[0].check


def test_runs_compute_what_they_read_not_tile_coordinates(gemm_ttgir):
    """P7 steps through the scalar arithmetic its runs read (a ring's slot and phase, a loop's bounds) and not
    through what only addresses memory (a tile's TMA coordinates): `temporal._scalars_read`."""
    loaded = load_triton(gemm_ttgir, "hopper_gemm.ttgir")
    with loaded.context:
        k = model.build(loaded.module, loaded.aliases)[0]
        read = temporal._static(k, None).read
        indices = [v for op in k.ops if op.name in ("ttg.memdesc_index", "ttng.wait_barrier") for v in op.operands]
        assert indices and all(v in read for v in indices)
        copies = [r for op in k.ops if op.name.startswith("arith.") and len(op.results) == 1
                  for r in op.results if len(list(r.uses)) and all(
                      u.owner.name == "ttng.async_tma_copy_global_to_local" for u in r.uses)]
        predicates = [r for r in copies if str(r.type) == "i1"]         # whether a copy runs: read
        coordinates = [r for r in copies if str(r.type) != "i1"]
        assert predicates and all(r in read for r in predicates)
        assert coordinates and not any(r in read for r in coordinates)


def test_a_finished_run_keeps_only_what_its_verdict_reads(gemm_ttgir):
    """P7 keeps its runs until the verdicts are made. A finished run keeps the ops it ran, its races, its counts
    and who touched what; its threads, clocks, barriers, values and access history go when it ends
    (`Sim._drop_state`). Kept whole, every run added its history to what the proof holds (hopper_gemm: about
    500 objects a run), and Python's collector ran twice as often during a proof."""
    loaded = load_triton(gemm_ttgir, "hopper_gemm.ttgir")
    with loaded.context:
        k = model.build(loaded.module, loaded.aliases)[0]
        temporal.Sim(k, 256).run()          # the first run reads the IR once for every run after it
        gc.collect()
        gc.disable()
        try:
            before = len(gc.get_objects())
            sims = [temporal.Sim(k, value, program=program).run()
                    for value in (256, 384, 192) for program in ((0, 1), (1, 2))]
            grown = (len(gc.get_objects()) - before) / len(sims)
        finally:
            gc.enable()
    assert grown < 50, f"{grown:.0f} more live objects a finished run"
    for sim in sims:    # what the verdict reads is still there
        assert sim.ran and sim.checked.get("spec0") and sim.own.get("spec0") and len(sim.tenants["spec0"]) == 3
    assert not any(sim.violations for sim in sims)


def test_a_hung_run_keeps_the_trace_its_verdict_shows():
    """A run that deadlocks drops its state as a finished one does, but its verdict shows the last events before
    the hang: those stay."""
    hanging = _seeded("s_p_ws", "none").replace("ttng.arrive_barrier %p_ready, 2,", "ttng.arrive_barrier %p_ready, 1,")
    (verdict,) = _p7_on_runs(hanging, (7,))
    assert "deadlocks" in verdict.detail, verdict
    assert len(verdict.data["trace"]) > 5 and any("wait" in line for line in verdict.data["trace"]), verdict.data

def _outcome(k, value, program):
    """What a run of `value` as `program` did, in full: how it ended, its steps, the ops it ran, the pairs it
    ordered and the races it found."""
    sim = temporal.Sim(k, value, "k.ttgir", program=program)
    end = temporal._outcome(sim)
    return (type(end).__name__, str(end), sim.steps, frozenset(sim.ran), sim.checked, sim.own, sim.tenants,
            sorted((v.first.op.name, v.second.op.name, v.lo, v.hi, v.why) for v in sim.violations))


@pytest.mark.parametrize("kernel,bug", [("ring_block_slot", "none"), ("ring_block_slot", "drop_wgmma_wait"),
                                        ("ring_last_slot", "none"), ("s_p_ws", "none")])
def test_runs_of_one_key_are_one_run(kernel, bug):
    """`Sim.key` is what a run takes from its arguments: two values of one key run the same ops with the same
    values (each run here in full and compared), which is why P7 runs one of them. A kernel whose block count is
    cdiv(K, 64) gives 7, 6, 5, 3, 2 and 1 one key; one whose loop bound is K itself keeps them apart."""
    loaded = load_triton(_seeded(kernel, bug), "k.ttgir")
    with loaded.context:
        k = model.build(loaded.module, loaded.aliases, "k.ttgir")[0]
        groups = {}
        for program in ((0, 1), temporal.PROGRAM_RUN):
            for value in temporal.RUNS:
                groups.setdefault(temporal.Sim(k, value, "k.ttgir", program=program).key(), []).append(
                    (value, program))
        shared = [g for g in groups.values() if len(g) > 1]
        for group in shared:
            first = _outcome(k, *group[0])
            for value, program in group[1:]:
                assert _outcome(k, value, program) == first, (group[0], value, program)
    small = {(v, (0, 1)) for v in (7, 6, 5, 3, 2, 1)}
    if kernel == "ring_block_slot":
        assert any(small <= set(g) for g in shared), shared
    elif kernel == "ring_last_slot":
        assert not any(len(small & set(g)) > 1 for g in shared), shared


@pytest.mark.parametrize("kernel,bug", [("ring_block_slot", "none"), ("ring_block_slot", "drop_wgmma_wait"),
                                        ("ring_block_slot", "wait_slot_0")])
def test_a_verdict_is_the_same_with_one_run_per_key(kernel, bug, monkeypatch):
    """P7 with one run per key gives the verdict of every run: the run of 7 stands for 6, 5, 3, 2 and 1 in the
    counts, the arguments named and the races reported (and a run that hangs is not stood for)."""
    text = _seeded(kernel, bug)
    once = _p7_on_runs(text, temporal.RUNS)
    monkeypatch.setattr(temporal.Sim, "key", lambda self: None)
    every = _p7_on_runs(text, temporal.RUNS)
    assert [v.as_dict() for v in once] == [v.as_dict() for v in every]
    if bug == "none":
        assert "integer arguments = 256, 384, 192, 128, 7, 6, 5, 3, 2, 1" in every[0].check, every[0]


@pytest.mark.parametrize("op,nth,first", [
    ("ttng.warp_group_dot_wait", -1, "ttng.warp_group_dot"),                    # the epilogue's wait(0)
    ("ttng.async_tma_store_wait", 0, "ttng.async_tma_copy_local_to_global"),    # store_wait before the reloads
])
def test_hopper_gemm_weakened_wait_caught(gemm_ttgir, op, nth, first):
    report = _prove(_weaken(gemm_ttgir, op, nth), "mutant.ttgir", "cuda:90")
    bad = [v for v in report.violations if v.prop == "P7"]
    assert bad and bad[0].data["ops"][0] == first, report.text()
    assert {"c_smem", "b_ring"} == set(bad[0].data["views"]), report.text()
    assert "hopper_gemm.py:" in bad[0].detail


def test_runs_that_hang_prove_nothing():
    """A wait no one completes (p_ready needs 2 arrivals, the softmax gives 1) hangs every run that reaches the
    aliased TMEM; a run that completes without touching it (n_iter = 0) orders nothing: "cannot prove", not
    "proven" on 0 pairs (a vacuous proof let a hanging warp-specialized GEMM through)."""
    text = _seeded("s_p_ws", "none")
    hanging = text.replace("ttng.arrive_barrier %p_ready, 2,", "ttng.arrive_barrier %p_ready, 1,")
    assert hanging != text
    for source, expected in ((text, "proven"), (hanging, "cannot prove")):
        loaded = load_triton(source, "k.ttgir")
        with loaded.context:
            kernels = model.build(loaded.module, loaded.aliases, "k.ttgir")
            verdicts = [v for k in kernels for v in temporal.p7_temporal(k, "k.ttgir", runs=(7, 0))]
        assert [v.status for v in verdicts] == [expected], [v.detail for v in verdicts]
    assert "deadlocked" in verdicts[0].detail and "p_ready" in verdicts[0].detail


def test_a_kernel_every_run_of_which_hangs_is_told_to_check_its_waits():
    """Every run deadlocks: the fix named loop bounds and buffer indices (what a run that cannot compute a value
    needs), not the waits (a helper's kernel with a wait dropped elsewhere, which left a partition hanging)."""
    hanging = _seeded("s_p_ws", "none").replace("ttng.arrive_barrier %p_ready, 2,", "ttng.arrive_barrier %p_ready, 1,")
    (verdict,) = _p7_on_runs(hanging, (7,))
    assert verdict.status == "cannot prove" and "stopped: the run deadlocks" in verdict.detail, verdict
    assert verdict.fix.startswith("check each wait the run names: its mbarrier's index and phase parity"), verdict.fix


def _p7_on_runs(text, runs):
    loaded = load_triton(text, "k.ttgir")
    with loaded.context:
        kernels = model.build(loaded.module, loaded.aliases, "k.ttgir")
        return [v for k in kernels for v in temporal.p7_temporal(k, "k.ttgir", runs=runs)]


def test_runs_that_never_reach_the_shared_bytes_prove_nothing():
    """ring_block_slot's epilogue tile lies on ring slot 2. A run of one block (every argument 5) touches slot 0
    and the tile, never the same bytes: "cannot prove" (it said "proven" on 0 overlapping accesses); the run of
    192 (three blocks) reaches slot 2 and orders its pairs."""
    text = _seeded("ring_block_slot", "none")
    one_block = _p7_on_runs(text, (5,))
    assert [v.status for v in one_block] == ["cannot prove"], [v.detail for v in one_block]
    assert "never exercised" in one_block[0].detail and "integer arguments = 5" in one_block[0].detail
    three_blocks = _p7_on_runs(text, (192,))
    assert [v.status for v in three_blocks] == ["proven"], [v.detail for v in three_blocks]
    assert not three_blocks[0].check.startswith("0 "), three_blocks[0].check


def test_a_view_no_run_reaches_is_named():
    """ring_block_slot's epilogue tile borrows a ring slot only past 1000 blocks: the kernel accesses the ring
    through two views, the runs through one. P7 says which views the kernel uses and that the runs used fewer."""
    report = _prove(_seeded("ring_block_slot", "epilogue_unreached"), "unreached.ttgir")
    (v,) = [v for v in report.verdicts if v.prop == "P7"]
    assert v.status == "cannot prove", report.text()
    assert re.search(r"accesses a_ring through 2 views, the runs \(integer arguments = 256, .*\) never reached "
                     r"c_smem\S* \(made at .*p7_seeded\.py:\d+\): the sharing", v.detail), v.detail


def test_a_view_no_run_reaches_is_named_beside_two_that_met():
    """The epilogue tile on every run, a second borrowed slot (d_smem) only past 1000 blocks: the runs order the
    ring against c_smem, and say nothing about d_smem. P7 names the one view they never reached, not the two
    they did."""
    report = _prove(_seeded("ring_block_slot", "second_tile_unreached"), "second_unreached.ttgir")
    (v,) = [v for v in report.verdicts if v.prop == "P7"]
    assert v.status == "cannot prove", report.text()
    assert re.search(r"accesses a_ring through 3 views, .* never reached d_smem\S* \(made at .*p7_seeded\.py:\d+\)"
                     r": the sharing was never exercised", v.detail), v.detail
    assert "c_smem" not in v.detail, v.detail
    reached = _prove(_seeded("ring_block_slot", "none"), "reached.ttgir")
    assert [v.status for v in reached.verdicts if v.prop == "P7"] == ["proven"], reached.text()


def test_the_op_budget_is_a_knob_and_the_verdict_names_it(monkeypatch):
    """A run over TLX_ALIAS_P7_STEPS ops is retried with smaller arguments, which may never reach the shared
    bytes: the verdict says which runs were cut and names the knob; a budget they fit in proves the kernel."""
    text = _seeded("ring_block_slot", "none")
    monkeypatch.setenv("TLX_ALIAS_P7_STEPS", "60")
    (v,) = [v for v in _prove(text, "budget60.ttgir").verdicts if v.prop == "P7"]
    assert v.status == "cannot prove" and "the sharing was never exercised" in v.detail, v.detail
    assert re.search(r"the runs with 256, \d+ used up the budget of 60 ops a run .* TLX_ALIAS_P7_STEPS=<ops>", v.fix), v.fix
    monkeypatch.setenv("TLX_ALIAS_P7_STEPS", "20_000")
    (v,) = [v for v in _prove(text, "budget20k.ttgir").verdicts if v.prop == "P7"]
    assert v.status == "proven" and "exceeded" not in v.check, v.check
    monkeypatch.setenv("TLX_ALIAS_P7_STEPS", "many")
    with pytest.raises(TlxAliasError, match=r"TLX_ALIAS_P7_STEPS='many' is not a positive number of ops"):
        _prove(text, "budget_bad.ttgir")


def test_a_loop_that_would_use_up_the_budget_ends_its_run_early():
    """A run whose loop cannot finish within the op budget (its cheapest iteration so far times the iterations
    left, past twice the budget) ends once that is known, not after spending the whole budget: such runs cost
    a hand-aliased FA tutorial kernel's proof 155 of its 259 ms. A run the budget holds still completes."""
    import z3

    modules = []   # the kernels' ops live as long as their module

    def sim(name, value):
        modules.append(load_triton(_seeded(name, "none"), f"{name}.ttgir"))
        (kernel,) = model.build(modules[-1].module, modules[-1].aliases, f"{name}.ttgir", z3.Context())
        return temporal.Sim(kernel, value, f"{name}.ttgir", 20_000)
    cut = sim("ring_last_slot", 4096)    # 4096 blocks: far over the budget
    with pytest.raises(temporal.Budget, match="would use up the run's budget of 20000 ops"):
        cut.run()
    assert cut.steps < 20_000 // 2, cut.steps
    done = sim("ring_last_slot", 1024)   # 1024 blocks of one tile: 14367 ops, within the budget
    done.run()
    assert 20_000 // 2 < done.steps <= 20_000, done.steps


def test_allocations_of_one_name_stay_apart():
    """Gluon names every mbarrier array a helper allocates after the helper's variable (upstream's attention
    example: 18 arrays, all `bar`). Merged by name, P7 counted three barriers' arrivals on one and deadlocked;
    each allocation keeps its own name (the repeated ones with their line) and the kernel is proven."""
    text = _seeded("s_p_ws", "none")
    same = re.sub(r'loc\("(s_ready|p_ready|o_bar)"', 'loc("bar"', text)
    assert same.count('loc("bar"') == 3
    report = _prove(same, "same_names.ttgir")
    assert report.ok and not report.unknowns, report.text()
    assert [v.status for v in report.verdicts if v.prop == "P7"] == ["proven"], report.text()
    names = {v.alloc for v in report.verdicts}
    assert "bar" in names and len([n for n in names if n.startswith("bar@")]) == 2, names


def test_a_proof_keeps_no_mlir_context_alive():
    """What P7 keeps between values of a run (the descriptor and scalar answers by type) lives with the kernel:
    a process-wide cache of types kept every compile's MLIR context, and its IR, alive (0.3 MB more per proof)."""
    import gc
    from tlx_alias._mlir import ir
    kernel = next(k for k, bug in sorted(SEEDED) if bug == "none" and not p7_seeded.refused_by_this_triton(k))
    text = _seeded(kernel, "none")
    gc.collect()
    before = ir.Context._get_live_count()
    for _ in range(2):
        report = _prove(text, f"{kernel}.ttgir")
        assert report.p7_ms > 0 and not report.violations
        del report
    gc.collect()
    assert ir.Context._get_live_count() == before
