"""P7 against an independent oracle (test/tools/p7_oracle.py) on synchronization mutants of real kernels.

A small fixed subset of `python test/tools/p7_mutate.py` (the whole table is in the README): every mutant
the oracle finds a hazard of P7's scope in (two views, or one view of a shared allocation) must be a P7
violation whose two lines are a pair the oracle found;
the unmutated kernels must be proven by P7 and safe for the oracle; the oracle itself must flag seeded bugs
and pass their correct variants (it is a judge only if it can fail).
"""
import pytest

import p7_mutate  # test/tools, on the path through conftest.py
import p7_oracle
import p7_seeded

_texts = {}


def _ttgir(kernel, bug=None):
    if p7_seeded.refused_by_this_triton(kernel):
        pytest.skip(f"the installed Triton refuses {kernel} itself (test_verify_temporal checks its diagnostic)")
    key = (kernel, bug)
    if key not in _texts:
        _texts[key] = p7_seeded.compile_ttgir(kernel, bug) if bug else p7_mutate.ttgir(kernel)
    return _texts[key]


# --- the oracle on its own ------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel,bug,ops", [
    ("s_p_alias", "p_before_s_wait", ("ttng.tc_gen5_mma", "ttng.tmem_store")),
    ("ring_epilogue", "load_before_store_wait", ("ttng.async_tma_copy_local_to_global",
                                                 "ttng.async_tma_copy_global_to_local")),
    ("s_p_ws", "arrive_early", ("ttng.tc_gen5_mma", "ttng.tmem_store")),
])
def test_oracle_flags_seeded_bug(kernel, bug, ops):
    """The seeded slip is a reachable cross-view hazard between the two ops that P7's seeded test names."""
    v = p7_oracle.judge(_ttgir(kernel, bug), (3,))
    assert v.complete and v.cross, v.summary()
    assert any({h.first[0], h.second[0]} == set(ops) for h in v.cross), [str(h) for h in v.cross]
    assert all(h.first[1].startswith("p7_seeded.py:") and h.second[1].startswith("p7_seeded.py:") for h in v.cross)
    h = v.cross[0]
    assert v.witness[h][-1].startswith(f"  -> {h.second[0]} at {h.second[1]} starts while")


def test_oracle_confirms_a_race_only_some_block_counts_reach():
    """ring_block_slot's slip is a race with three blocks of K (192), none with one, two or four (its correct
    variant is safe at 192): what P7's run of 192 reports is real, and runs without it could not see it."""
    bad = _ttgir("ring_block_slot", "drop_wgmma_wait")
    v = p7_oracle.judge(bad, (192,))
    assert v.complete and v.cross, v.summary()
    assert {(h.first[0], h.second[0]) for h in v.cross} == {("ttng.warp_group_dot", "ttg.local_store")}
    for value in (7, 128, 256):
        v = p7_oracle.judge(bad, (value,))
        assert v.complete and not v.cross, (value, v.summary())
    v = p7_oracle.judge(_ttgir("ring_block_slot", "none"), (192,))
    assert v.complete and not v.hazards and not v.hang, v.summary()


def test_oracle_binds_arguments_by_name():
    """`--mixed` gives K apart from the other integer arguments (the descriptors' shapes and strides here): the
    race of ring_block_slot is there with K = 192 whatever the others are, and not with K = 256."""
    bad = _ttgir("ring_block_slot", "drop_wgmma_wait")
    v = p7_oracle.judge(bad, ({"K": 192, None: 256},))
    assert v.complete and v.cross, v.summary()
    v = p7_oracle.judge(bad, ({"K": 256, None: 192},))
    assert v.complete and not v.cross, v.summary()


@pytest.mark.parametrize("kernel", ["s_p_alias", "ring_epilogue", "s_p_ws"])
def test_oracle_passes_correct_kernel(kernel):
    """The correct variant: every interleaving explored, no hazard, no hang."""
    v = p7_oracle.judge(_ttgir(kernel, "none"), (3,))
    assert v.complete and not v.hazards and not v.hang, v.summary()
    assert v.states > v.events > 0          # more than one schedule was explored


def test_oracle_sees_a_hang():
    """A wait on a barrier nobody signals any more (the MMA's mbarrier dropped) hangs every schedule."""
    text = _ttgir("s_p_alias", "none")
    (target, mutant), *_ = p7_mutate.drop_mma_signal(text)
    v = p7_oracle.judge(mutant, (3,))
    assert v.hang and not v.hazards, (target, v.summary())


# --- P7 against the oracle ------------------------------------------------------------------------------

SUBSET = [  # (kernel, operators): compiled in seconds, P7 and the oracle fast on them
    ("s_p_alias", None),
    ("s_p_ws", ("arrive_early", "wait_later")),
    ("hopper_gemm", ("weaken_wgmma_wait", "weaken_store_wait", "drop_wait", "wait_later")),
]


@pytest.fixture(scope="module")
def outcomes():
    out = {}
    for kernel, ops in SUBSET:
        text = _ttgir(kernel) if kernel == "hopper_gemm" else _ttgir(kernel, "none")
        values = (3, 384) if kernel == "hopper_gemm" else (3,)
        out[kernel] = (text, values, p7_mutate.run(kernel, text, ops, values))
    return out


@pytest.mark.parametrize("kernel", [k for k, _ in SUBSET])
def test_unmutated_kernel_proven_and_safe(outcomes, kernel):
    text, values, _ = outcomes[kernel]
    verdicts = p7_mutate.p7(text)
    assert verdicts and all(v.status == "proven" for v in verdicts), [v.detail for v in verdicts]
    v = p7_oracle.judge(text, values)
    assert v.complete and not v.hazards and not v.hang, v.summary()


@pytest.mark.parametrize("kernel", [k for k, _ in SUBSET])
def test_every_oracle_unsafe_mutant_is_caught(outcomes, kernel):
    """Each mutant with a hazard in P7's scope (two views, or one view of a shared allocation) is a P7 violation
    naming both ops' lines, a pair the oracle found."""
    _, _, got = outcomes[kernel]
    assert got and not [o for o in got if o.verdict in ("unsupported", "invalid")]
    unsafe = [o for o in got if o.verdict in ("caught", "missed")]
    assert unsafe, "the subset must contain unsafe mutants"
    for o in unsafe:
        assert o.verdict == "caught", f"{o.op} {o.target}: oracle {o.oracle.summary()}, P7 {o.p7}"
        assert o.pair_ok, f"{o.op} {o.target}: P7 {o.found}, oracle {[str(h) for h in o.oracle.scoped]}"
        assert all(line in d for pair, d in zip(o.found, o.details) for line in pair), o.details


def test_subset_has_equivalent_mutants_p7_proves(outcomes):
    """The oracle's 'no hazard' side is exercised too, and P7 raises no alarm on those mutants."""
    equiv = [o for _, _, got in outcomes.values() for o in got if o.verdict == "equivalent"]
    assert equiv
    assert not [o for o in equiv if o.false_alarm], [(o.op, o.target, o.found) for o in equiv if o.false_alarm]
