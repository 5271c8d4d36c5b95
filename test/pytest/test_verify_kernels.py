"""tlx-verify on real Gluon kernels compiled on the CPU (sm_90a / sm_100a), not just the checked-in dumps.

The kernels are those of test/lit/verify/Inputs/make_inputs.py: hand-aliased the way the Gluon tutorials
alias (`_reinterpret`, `slice`, `index`, warp-specialized captures, ring counters carried through loop
nests), some with one deliberate aliasing bug. Triton's custom-form `ttgir` goes through
`triton._C.libtriton.ir.parse_mlir_module` and the plugin bridge, exactly as a cache dump would.
"""
import pytest

import make_inputs  # test/lit/verify/Inputs, on the path through conftest.py
from tlx_alias.verify import prove_module
from tlx_alias.verify.props import UNKNOWN
from tlx_alias.verify.source import load_triton

EXPECT = {  # kernel -> the property its bug breaks (None: safe)
    "fa_borrow_ok": None, "gemm_epilogue_ok": None, "ws_ring_ok": None, "fa_tutorial_borrow_ok": None,
    "fa_packed_p_bad": "P3", "ring_wrap_bad": "P5", "gemm_epilogue_overflow_bad": "P1", "fa_alpha_past_end_bad": "P1",
    "last_slot_after_loop_ok": None, "last_slot_after_loop_bad": "P5",
    "last_slot_after_while_ok": None, "last_slot_after_while_bad": "P5",
    "last_slot_after_inner_loop_ok": None, "last_slot_after_inner_loop_bad": "P5",
}


def test_every_kernel_has_an_expectation():
    assert set(EXPECT) == set(make_inputs.KERNELS)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_compiled_kernel(name, refused):
    if refused(make_inputs, name):  # this Triton release refuses the kernel itself
        return
    report = _prove(name)
    if EXPECT[name] is None:
        assert report.ok and not report.unknowns, report.text()
    else:
        assert {v.prop for v in report.violations} == {EXPECT[name]}, report.text()
        assert all("make_inputs.py:" in v.detail for v in report.violations), report.text()


def _prove(name):
    text = make_inputs.compile_ttgir(name)
    loaded = load_triton(text, name + ".ttgir")
    with loaded.context:
        return prove_module(loaded.module, None, loaded.aliases, name + ".ttgir")


@pytest.mark.parametrize("name", sorted(make_inputs.CLUSTER_KERNELS))
def test_cluster_kernel_is_not_proven(name):
    """A kernel of 2 CTAs per cluster whose multicast ring races across the CTAs: P7, which runs one CTA, said
    "proven" and the file SAFE. Nothing of such a kernel is claimed: one "cannot prove" per allocation, with why."""
    if not make_inputs.has_cluster_api():
        pytest.skip("this Triton's Gluon has no CGA layouts (cga_layout) for a kernel of several CTAs")
    report = _prove(name)
    assert not report.violations and report.unknowns, report.text()
    assert all(v.status == UNKNOWN and v.prop == "P1-P8" and "2 CTAs per cluster" in v.detail
               for v in report.verdicts), report.text()
    assert {v.alloc for v in report.verdicts} == {"a_ring", "bar"}, report.text()


# --- the project's own kernels (kernels/), lowered by the plugin: every one must verify clean -------------

def _ttgir(compiled):
    return compiled.ttgir if hasattr(compiled, "ttgir") else compiled.asm["ttgir"]


PROJECT = {
    "hopper_gemm": ("tlx_alias.kernels.hopper_gemm", "compile_gemm", {}, 90),
    "hopper_gemm_3_stages": ("tlx_alias.kernels.hopper_gemm", "compile_gemm", {"stages": 3, "BN": 128}, 90),
    "hopper_attention": ("tlx_alias.kernels.hopper_attention", "compile_attention", {}, 90),
    "hopper_attention_causal": ("tlx_alias.kernels.hopper_attention", "compile_attention", {"causal": True}, 90),
    "blackwell_attention": ("tlx_alias.kernels.blackwell_attention", "compile_attention", {}, 100),
    "blackwell_attention_d64": ("tlx_alias.kernels.blackwell_attention", "compile_attention", {"head_dim": 64}, 100),
}


@pytest.mark.parametrize("name", sorted(PROJECT))
def test_project_kernel_verifies_clean(name):
    import importlib
    modname, fn, kwargs, arch = PROJECT[name]
    module = importlib.import_module(modname)
    compiled = getattr(module, fn)(**kwargs)
    loaded = load_triton(_ttgir(compiled), name + ".ttgir")
    with loaded.context:
        report = prove_module(loaded.module, f"cuda:{arch}", loaded.aliases, name + ".ttgir")
    assert report.ok and not report.unknowns, report.text()
    assert any(a.startswith("spec") for a in {m.name for m in report.maps}), "no TLX backing allocation"
    # P7: the spec's views share bytes, and every access to them is ordered (README: The temporal proof)
    assert any(v.prop == "P7" and v.status == "proven" for v in report.verdicts), report.text()
