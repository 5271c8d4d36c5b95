"""The verifier on the corpus (test/corpus): kernels written in the idioms of upstream's Gluon tutorials
and examples, each clean form proven with no "cannot prove", each seeded bug reported as a violation of
the right property with a counterexample in the kernel's own names and lines (a ring counter out of range
comes with the loop iteration and counter values of a concrete run that reaches it)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus"))
import cases  # noqa: E402


@pytest.mark.parametrize("name", list(cases.CASES))
def test_corpus_case(name, refused):
    if refused(cases, name):  # this Triton release refuses the kernel itself
        return
    report = cases.prove(name)
    expect = cases.CASES[name][4]
    if expect is None:
        assert report.proven, report.text()
        return
    prop, text = expect
    assert {v.prop for v in report.violations} == {prop}, report.text()
    assert any(text in v.detail and "kernels.py:" in v.detail for v in report.violations), report.text()


def test_tlx_treeless_bug_stops_the_compile():
    """Through the plugin (default TLX_ALIAS_PROOF=error) the tree-less spec's overlap is a compile error
    that names the kernel line and a fix in TLX's terms (not `_reinterpret`)."""
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    import triton
    fn, sig, constexprs, cap, _ = cases.CASES["tlx tree-less, q at i % 2"]
    with pytest.raises(Exception) as err:
        triton.compile(GluonASTSource(fn, sig, constexprs), target=GPUTarget("cuda", cap, 32))
    msg = str(err.value)
    assert "tlx-verify P3" in msg and "kernels.py:" in msg and "set_buffer_overlap" in msg
    assert "_reinterpret" not in msg
