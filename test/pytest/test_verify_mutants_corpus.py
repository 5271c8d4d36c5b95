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
