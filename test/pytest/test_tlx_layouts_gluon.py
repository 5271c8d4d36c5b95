"""TLX's SMEM layouts (test/data/tlx_cases.json) written as Gluon kernels: placed as TLX places them, and on a
GPU the bytes really land there.

test_tlx_parity.py checks the passes on generic MLIR. Here each accepted SMEM case becomes a kernel of the
public API (one int8 allocation per leaf, the case's tree built with `reuse_group`), compiled through the
plugin: on the CPU the lowered views must sit at TLX's offsets and stride; on a GPU (skipped without CUDA)
the kernel writes every buffer, leaf after leaf, index after index, with a barrier after each, and reads every
buffer back. The host predicts each read by replaying the same writes on a byte array at TLX's offsets, so a
buffer that lands anywhere else (alignment, stride, a distinct sibling on the wrong bytes) reads wrong bytes.

Reading a buffer back after a `shared` sibling wrote over it returns the sibling's bytes: that is how these
kernels show where the siblings lie, and what P7 calls a read of a buffer that was no longer live (a
violation that stops a compile). Here the proof runs with TLX_ALIAS_PROOF=warn, and the CPU test checks that
P7 warns exactly for the cases whose replay has a buffer read back bytes another leaf wrote last.
"""
import importlib.util
import json
import os
import sys
import warnings

import pytest

from tlx_alias.kernels._common import HOPPER, compile_for
from tlx_alias.kernels.demo import lowered_views

DATA = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "tlx_cases.json")))


def _uniform_steps(tree):
    """Index i of every leaf is at offset + i * stride only when no shared group has group_size > 1."""
    if isinstance(tree, str):
        return True
    if tree["kind"] == "shared" and tree["group_size"] != 1:
        return False
    return all(_uniform_steps(c) for c in tree["children"])


CASES = [c for c in DATA["cases"] if c["storage"] == "smem" and not c["errors"] and c["tree"] is not None
         and c["buffer_size_bytes"] is None and _uniform_steps(c["tree"])]


def _tree_code(node):
    if isinstance(node, str):
        return node
    kind = "tlx.reuse_group_type." + node["kind"]
    return f"tlx.reuse_group({', '.join(_tree_code(c) for c in node['children'])}, group_type={kind})"


def kernel_source(case):
    """One Gluon kernel for the case: int8 buffers of the case's sizes, written then read back to out_ptr
    (leaves in the case's order, each buffer's bytes contiguous in out)."""
    body = ["    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)"]
    for name, (units, num) in case["leaves"].items():
        body.append(f"    {name} = tlx.local_alloc(({units},), gl.int8, {num}, tlx.storage_kind.smem, reuse=spec, "
                    f"layout=PLAIN)")
    body.append(f"    spec.set_buffer_overlap({_tree_code(case['tree'])})")
    for tag, (name, (units, num)) in enumerate(case["leaves"].items()):
        body.append(f"    for i in gl.static_range({num}):")
        body.append(f"        {name}.index(i).store(pattern({units}, {tag}, i))")
        body.append("        compat.barrier()")
    at = 0
    for name, (units, num) in case["leaves"].items():
        body.append(f"    for i in gl.static_range({num}):")
        body.append(f"        gl.store(out_ptr + {at} + i * {units} + gl.arange(0, {units}, layout=ROW), "
                    f"{name}.index(i).load(ROW))")
        at += units * num
    return "\n".join([
        "from triton.experimental import gluon",
        "from triton.experimental.gluon import language as gl",
        "from tlx_alias import _triton as compat",
        "import tlx_alias.language as tlx",
        "PLAIN: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])",
        "ROW: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])",
        "",
        "@gluon.jit",
        "def pattern(n: gl.constexpr, tag: gl.constexpr, i):",
        "    return ((gl.arange(0, n, layout=ROW) * 7 + tag * 31 + i * 13) % 251 - 125).to(gl.int8)",
        "",
        "@gluon.jit",
        "def kernel(out_ptr):",
        *body, ""])


def read_over(case) -> bool:
    """Does some buffer read back bytes that another leaf wrote after it (the replay of `expected_bytes`)?"""
    stride = case["stride"]
    owner = [None] * (stride * max(num for _, num in case["leaves"].values()))
    for name, (units, num) in case["leaves"].items():
        for i in range(num):
            base = case["offsets"][name] + i * stride
            owner[base:base + units] = [name] * units
    return any(owner[p] != name for name, (units, num) in case["leaves"].items() for i in range(num)
               for p in range(case["offsets"][name] + i * stride, case["offsets"][name] + i * stride + units))


@pytest.fixture(autouse=True)
def _proof_warns(monkeypatch):
    monkeypatch.setenv("TLX_ALIAS_PROOF", "warn")   # the read-backs over siblings are on purpose (module doc)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")   # the proof's warnings come from a compile (two cases
                                                       # make the same kernel: the second would be a cache hit)


def expected_bytes(case):
    """Replay the kernel's writes on a byte array at TLX's offsets and read every buffer back (the oracle)."""
    stride = case["stride"]
    memory = [None] * (stride * max(num for _, num in case["leaves"].values()))
    for tag, (name, (units, num)) in enumerate(case["leaves"].items()):
        for i in range(num):
            base = case["offsets"][name] + i * stride
            memory[base:base + units] = [(p * 7 + tag * 31 + i * 13) % 251 - 125 for p in range(units)]
    out = []
    for name, (units, num) in case["leaves"].items():
        for i in range(num):
            base = case["offsets"][name] + i * stride
            out += memory[base:base + units]
    return out


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """case name -> its @gluon.jit kernel, each from a file of its own (Gluon reads a kernel's source)."""
    where, out = tmp_path_factory.mktemp("tlx_layouts"), {}
    for case in CASES:
        path = where / f"{case['name']}.py"
        path.write_text(kernel_source(case))
        spec = importlib.util.spec_from_file_location(f"tlx_layout_{case['name']}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        out[case["name"]] = module.kernel
    yield out
    for case in CASES:
        sys.modules.pop(f"tlx_layout_{case['name']}", None)


def test_the_cases_cover_alignment_and_nesting():
    """The selection keeps TLX's alignment lit case and the sub-128-byte distinct siblings it pads."""
    names = {c["name"] for c in CASES}
    assert {"lit_smem_alignment_1536", "derived_smem_distinct_64B_128B", "derived_smem_distinct_in_distinct",
            "lit_nested_distinct_shared"} <= names


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_gluon_kernel_is_placed_as_tlx_places_it(case, kernels):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = compile_for(kernels[case["name"]], {"out_ptr": "*i8"}, target=HOPPER)
    views = {name: view for name, view, _ in lowered_views(compiled.ttgir)}
    assert {name: views[name].offset for name in case["leaves"]} == case["offsets"]
    assert {views[name].stride for name in case["leaves"]} == {case["stride"]}
    p7 = [str(w.message) for w in caught if "[tlx-verify P7] violation" in str(w.message)]
    assert bool(p7) == read_over(case), p7
    assert all("the two buffers were live at the same time" in m for m in p7), p7


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_gpu_bytes_land_where_tlx_places_them(case, kernels):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    total = sum(units * num for units, num in case["leaves"].values())
    out = torch.zeros(total, dtype=torch.int8, device="cuda")
    kernels[case["name"]][(1,)](out)
    assert out.cpu().tolist() == expected_bytes(case)
