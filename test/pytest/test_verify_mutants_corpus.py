"""Mutation testing of the verifier on hand-aliased kernels (`test/tools/mutate.py --corpus`).

The corpus's clean kernels get the bugs an author of hand-aliased code makes (a ring wrapping one past its
end, an allocation one buffer short, a subslice on the wrong bytes, an index + 1 or - 1); the oracle of
`hand_mutate.py` runs each mutant concretely, independent of the verifier. First the oracle itself is held
to the corpus's own verdicts (every seeded bug unsafe, every clean kernel safe); then every mutant it finds
unsafe must stop the compile under the default policy, and none may be unreadable or unjudged.
"""
import pytest

import hand_mutate
import mutate

_kernels = {}


def kernels(clean):
    if clean not in _kernels:
        _kernels[clean] = mutate.corpus_kernels(clean)
    return _kernels[clean]


def refused_here(clean) -> int:
    """How many of the corpus's kernels of this kind the installed Triton refuses itself (corpus_kernels
    leaves them out): 3.8 reinterprets only whole allocations at their exact size."""
    import cases
    import make_inputs
    kernels(clean)   # puts both collections on the path
    return (sum(1 for n, c in cases.CASES.items() if (c[4] is None) == clean and cases.rejected_by_this_triton(n))
            + sum(1 for n in make_inputs.KERNELS if n.endswith("_ok") == clean and make_inputs.rejected_by_this_triton(n)))


def clean_kernel(name):
    """A clean corpus kernel by name; skipped where this Triton refuses it itself."""
    if name not in kernels(True):
        pytest.skip(f"{name!r}: the installed Triton refuses this kernel itself (test/corpus/cases.py REJECTED)")
    return kernels(True)[name]()


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "seeded"])
def test_oracle_agrees_with_the_corpus(clean):
    """The oracle finds every seeded bug of the corpus and the lit suite, and nothing in the clean forms."""
    verdicts = {name: hand_mutate.judge(build()) for name, build in kernels(clean).items()}
    assert len(verdicts) >= (12 if clean else 8) - refused_here(clean)
    wrong = {name: problems for name, problems in verdicts.items() if bool(problems) == clean}
    assert wrong == {}


def test_oracle_names_the_hazard():
    ttgir = clean_kernel("borrow P/alpha/m/l")
    alpha_down = [text for target, text in hand_mutate.view_wrong_bytes(ttgir) if "column 63 (was 64)" in target]
    assert len(alpha_down) == 1
    assert any(p.startswith("borrows: [0, 64)") and "[63, 64)" in p for p in hand_mutate.judge(alpha_down[0]))
    ring = clean_kernel("ring N=3 (persistent nest)")
    wraps = [text for _, text in hand_mutate.ring_wrap(ring)]
    assert len(wraps) == 1 and any("index 3 of 3" in p for p in hand_mutate.judge(wraps[0]))


@pytest.mark.parametrize("name", ["ring N=3 (persistent nest)", "toggle idx ^= 1", "rollover ws N=3",
                                  "pred (i-1)%2 under i>=1", "while ring N=3", "borrow P/alpha/m/l",
                                  "lit: ws_ring_ok"])
def test_every_unsafe_corpus_mutant_is_caught(name):
    row = mutate.measure_hand(name, ttgir=clean_kernel(name))
    why = "\n".join(f"{o.verdict} {o.op}: {o.target}: {o.problems[:2]}" for o in row.outcomes
                    if o.verdict in ("missed", "invalid", "unjudged", "flagged"))
    assert row.base_ok
    assert row.caught + row.count("stopped") > 0
    assert row.missed == 0 and row.count("invalid", "unjudged") == 0, why
    assert row.count("flagged") == 0, why


# -- the oracle reads what upstream's tutorials write (hand-written ttgir in Triton 3.9's printed form) ---------

_HEAD = """#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:100"} {
  tt.func public @k(%n: i32) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %c6 = arith.constant 6 : i32
    %true = arith.constant true
    %ring = ttg.local_alloc : () -> !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>
"""
_TAIL = """    tt.return
  }
}
"""
_SLOT = "!ttg.memdesc<64x64xf16, #shared, #smem, mutable>"
_RING = "!ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>"


def _kernel(body: str) -> str:
    return _HEAD + body + _TAIL


def _load(slot_index: str) -> str:
    return (f"    %s = ttg.memdesc_index %ring[{slot_index}] : {_RING} -> {_SLOT}\n"
            f"    %v = ttg.local_load %s : {_SLOT} -> tensor<64x64xf16>\n")


def test_oracle_runs_loops_of_no_trip():
    """`(n - 1) % 3` after a loop of n trips: index -1 when the loop does not run (argument 0)."""
    body = (f"    %last = arith.subi %n, %c1 : i32\n    %i = arith.remsi %last, %c3 : i32\n" + _load("%i"))
    assert any("index -1 of 3" in p for p in hand_mutate.judge(_kernel(body)))


def test_oracle_reads_multi_result_ops_and_mma_tokens():
    """`%a, %b = tt.split` and `%tok = ttng.tc_gen5_mma ...` (a token, the trailing types are its operands')
    no longer stop the oracle: it goes on to the out-of-range index after them."""
    body = (f"    %t = ttg.local_load %ring : {_RING} -> tensor<3x64x64xf16>\n"
            "    %lo, %hi = tt.split %t : tensor<3x64x64xf16> -> tensor<3x64xf16>\n"
            "    %acc = ttng.tmem_alloc : () -> !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>\n"
            f"    %a = ttg.memdesc_index %ring[%c0] : {_RING} -> {_SLOT}\n"
            f"    %tok = ttng.tc_gen5_mma %a, %a, %acc[], %true, %true : {_SLOT}, {_SLOT}, "
            "!ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>\n" + _load("%c3"))
    assert any("index 3 of 3" in p for p in hand_mutate.judge(_kernel(body)))


def test_oracle_judges_the_values_it_can_run():
    """`6 / n` cannot run at n = 0; the runs at 1, 3, 9 still judge the kernel (6 / 1 = 6: out of range),
    and a kernel no run can finish gets no verdict."""
    assert any("index 6 of 3" in p for p in hand_mutate.judge(_kernel("    %q = arith.divsi %c6, %n : i32\n"
                                                                       + _load("%q"))))
    with pytest.raises(hand_mutate.Unsupported, match="division|modulo"):
        hand_mutate.judge(_kernel("    %q = arith.divsi %c6, %c0 : i32\n" + _load("%q")))


def _borrow(name: str, ty: str, loc: str, pad: str = "    ") -> str:
    """A reinterpret of the selected buffer %s as `ty` made at source location `loc`, written through."""
    desc = f"!ttg.memdesc<{ty}, #shared, #smem, mutable>"
    return (f"{pad}%{name} = ttg.memdesc_reinterpret %s : {_SLOT} -> {desc} loc({loc})\n"
            f"{pad}ttg.local_store %x, %{name} : tensor<{ty}> -> {desc}\n")


@pytest.mark.parametrize("second, loc, unsafe", [("64x64xf16", "#loc1", False), ("64x64xf16", "#loc2", True),
                                                 ("32x64xf32", "#loc1", True)],
                         ids=["the same borrow again", "another borrow on the same bytes", "another type on them"])
def test_oracle_borrows(second, loc, unsafe):
    """Two reinterprets of one selected buffer: the same borrow (its source line) made again in another block
    is one tenant (upstream's attention makes P's view in its loop and again after it); another borrow on
    those bytes, of the same type or not, is a second live value there (alpha moved onto m's column)."""
    body = (f"    %s = ttg.memdesc_index %ring[%c1] : {_RING} -> {_SLOT}\n    %x = arith.constant 0 : i32\n"
            + _borrow("p", "64x64xf16", "#loc1") + "    scf.if %true {\n" + _borrow("q", second, loc, " " * 6)
            + "    }\n")
    text = _kernel(body) + '#loc1 = loc("k.py":10:4)\n#loc2 = loc(callsite(#loc3 at #loc1))\n#loc3 = loc("k.py":12:8)\n'
    problems = hand_mutate.judge(text)
    assert any(p.startswith("borrows:") for p in problems) == unsafe, problems


@pytest.mark.parametrize("column, problem", [(32, None), (64, "bounds: [")],
                         ids=["the right half", "one width past it"])
def test_oracle_slices_along_an_inner_dimension(column, problem):
    """Upstream's attention splits a tile by columns (`memdesc_subslice %t[0, 64]`): the oracle takes the
    slice's elements first to last (a hull inside the buffer); one slice width further leaves the last buffer."""
    half = "!ttg.memdesc<64x32xf16, #shared, #smem, mutable, 64x64>"
    body = (f"    %s = ttg.memdesc_index %ring[%c2] : {_RING} -> {_SLOT}\n"
            f"    %h = ttg.memdesc_subslice %s[0, {column}] : {_SLOT} -> {half}\n"
            f"    %v = ttg.local_load %h : {half} -> tensor<64x32xf16>\n")
    problems = hand_mutate.judge(_kernel(body))
    assert (problems == []) if problem is None else any(p.startswith(problem) for p in problems), problems


def test_shrink_takes_rings_not_tiles():
    """`allocation one buffer short` applies to what a `memdesc_index` selects from; a single tile used whole
    (an epilogue tile, a TMEM accumulator) one row short is another shape, which its users no longer match."""
    tile = "!ttg.memdesc<64x64xf16, #shared, #smem, mutable>"
    body = (f"    %tile = ttg.local_alloc : () -> {tile}\n    %t = ttg.local_load %tile : {tile} -> tensor<64x64xf16>\n"
            + _load("%c1"))
    targets = [target for target, _ in hand_mutate.shrink_allocation(_kernel(body))]
    assert targets == ["%ring 3x64x64 -> 2x64x64 buffers"]


def test_oracle_takes_arguments_apart():
    """A bug that needs two arguments apart: `(m - 1) % 3` read in a loop over n. With every argument equal,
    m = 0 only where the loop takes no step; the run with m = 0, n = 3 reaches the read."""
    text = _kernel("    %last = arith.subi %m, %c1 : i32\n    %i = arith.remsi %last, %c3 : i32\n"
                   "    scf.for %t = %c0 to %n step %c1  : i32 {\n" + _load("%i").replace("    ", "      ")
                   + "    }\n").replace("@k(%n: i32)", "@k(%n: i32, %m: i32)")
    assert any("index -1 of 3" in p for p in hand_mutate.judge(text))
