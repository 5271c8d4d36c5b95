"""The warp-specialized Hopper GEMM (kernels/hopper_gemm_ws.py): compiled for sm_90a on the CPU, run on an sm_90 GPU
where there is one.

CPU: both dtypes and both variants compile through the plugin; the SMEM the lowering lays out matches the
docstring's plan (`smem_plan`), view by view (c_ring[s] on b_ring[s] with SHARE, a private C half per consumer
without); the fourth stage fits only with sharing (the over-capacity error names the spec's line); the proof
settles P1-P7 with nothing unproven, and P7's runs are not vacuous (they reach the epilogue slots and order
accesses to them); P7 catches the epilogue slot released before its TMA store has read it; the IR has the three
partitions, the register split and the ring barriers' counts; ptxas keeps the wgmmas asynchronous without spills.
GPU: C against an fp32 PyTorch product on ragged shapes (M, N, K not multiples of the tile), both dtypes, both
variants; many tiles per program, repeated launches bit for bit.
"""
import functools
import math
import re

import pytest
import torch
from hopper_tests import CAPTURE_SLACK, GPU, MBARRIER
from ir_text import proof_report, smem_backing, views
from triton.experimental.gluon import language as gl

import sass
from tlx_alias import _triton as compat
from tlx_alias.errors import TlxAliasError
from tlx_alias.layout import align_up
from tlx_alias.kernels import hopper_gemm_ws as ws
from tlx_alias.verify import temporal

pytestmark = pytest.mark.usefixtures("private_cache")


@functools.lru_cache(maxsize=None)
def kernel(dtype=gl.bfloat16, share=True, stages=None, BN=256):
    return ws.compile_gemm_ws(dtype, share, stages, BN=BN)


# ----------------------------------------------------------------------------------------------- layout

@pytest.mark.parametrize("dtype,share,stages,BN", [(gl.bfloat16, True, 4, 256), (gl.float16, True, 4, 256),
                                                   (gl.bfloat16, False, 3, 256), (gl.float16, False, 3, 256),
                                                   (gl.bfloat16, True, 3, 256), (gl.bfloat16, True, 7, 128),
                                                   (gl.bfloat16, False, 6, 128)])
def test_compiles_with_the_planned_layout(dtype, share, stages, BN):
    k = kernel(dtype, share, stages, BN)
    plan = ws.smem_plan(stages, share, BN=BN)
    spec = plan["spec"]
    if compat.REINTERPRET_KEEPS_SIZE:   # 3.8 pads a spec to a multiple of every buffer's size (README, Limits)
        spec = align_up(spec, math.lcm(plan["a_stage"], plan["b_stage"], plan["c_half"]))
    assert smem_backing(k.ttgir) == [spec]                          # one backing allocation, the planned size
    extra = k.smem_bytes - spec
    assert 2 * stages * MBARRIER <= extra <= 2 * stages * MBARRIER + CAPTURE_SLACK
    assert k.smem_bytes <= ws.SMEM_LIMIT

    v = views(k.ttgir)
    a, b, c = plan["a_stage"], plan["b_stage"], plan["c_half"]
    if share:   # distinct(shared(b_ring, c_ring), a_ring): C[s] is B[s]
        expected = {"b_ring": 0, "c_ring": 0, "a_ring": stages * b}
        assert v["c_ring"]["slot"] == b and v["c_ring"]["num"] == stages
    else:       # distinct(c_ring, b_ring, a_ring)
        expected = {"c_ring": 0, "b_ring": 2 * c, "a_ring": 2 * c + stages * b}
        assert v["c_ring"]["num"] == 2
    assert {name: p["offset"] for name, p in v.items()} == expected
    assert v["a_ring"]["slot"] == a and v["b_ring"]["slot"] == b
    name = "bf16" if dtype == gl.bfloat16 else "f16"
    assert re.match(rf"!ttg\.memdesc<\d+x128x64x{name}", v["a_ring"]["type"])
    assert re.match(rf"!ttg\.memdesc<\d+x64x{BN}x{name}", v["c_ring"]["type"])


def test_docstring_plan_numbers():
    """The byte plan the module docstring states."""
    shared, alone = ws.smem_plan(4, True), ws.smem_plan(3, False)
    assert (shared["a_stage"], shared["b_stage"], shared["c_half"]) == (16384, 32768, 32768)
    assert shared["spec"] == 196608 and alone["spec"] == 212992
    assert ws.smem_plan(4, False)["spec"] == 262144 > ws.SMEM_LIMIT == 232448
    assert ws.most_stages(True) == 4 and ws.most_stages(False) == 3
    assert ws.most_stages(True, BN=128) == 7 and ws.most_stages(False, BN=128) == 6     # 128 x 128 x 64 tiles
    assert ws.DEFAULT_STAGES == {True: ws.most_stages(True), False: ws.most_stages(False)}


def test_fourth_stage_fits_only_with_sharing():
    with pytest.raises(TlxAliasError) as info:
        ws.compile_gemm_ws(gl.bfloat16, share=False, stages=4)
    assert "shared memory over capacity: this spec needs 262144 bytes, the target allows 232448" in str(info.value)
    line = open(ws.__file__).read().splitlines()[int(info.value.src.rsplit(":", 1)[1]) - 1]
    assert "tlx.storage_alias_spec" in line


def test_epilogue_needs_three_slots():
    """Two epilogue steps plus the next tile's first k-step (see 'Release late'): STAGES=2 would deadlock."""
    with pytest.raises(Exception, match="ring needs >= 3 slots"):
        ws.compile_gemm_ws(gl.bfloat16, share=True, stages=2)


# ----------------------------------------------------------------------------------------------- proof

@pytest.mark.parametrize("dtype,share,stages", [(gl.bfloat16, True, 4), (gl.float16, True, 3),
                                                (gl.bfloat16, False, 3)])
def test_proof_settles_every_property(dtype, share, stages):
    """P1-P7 proven for the spec, P8 not applicable, nothing a violation or 'cannot prove'. P7's bounded runs
    must all complete (a run that deadlocks is skipped as 'outside the kernel's domain', which would make the
    proof vacuous: a kernel that hangs on every real shape would pass) and, with SHARE, order accesses to the
    bytes C shares with B."""
    report = proof_report(kernel(dtype, share, stages).ttgir)
    assert not report.violations and not report.unknowns
    spec = {prop: status for alloc, prop, status, _ in report.grouped() if alloc == "spec0"}
    if share:
        assert spec == {**{f"P{i}": "proven" for i in range(1, 8)}, "P8": "n/a"}
        (p7,) = [v for alloc, prop, _, vs in report.grouped() if alloc == "spec0" and prop == "P7" for v in vs]
        assert "deadlock" not in p7.check and "exceeded" not in p7.check
        ordered = int(re.match(r"(\d+) overlapping accesses", p7.check).group(1))
        # every run completed, as program 0 of 1 and, the kernel being persistent, as program 1 of 2
        runs = ", ".join(map(str, temporal.RUNS))
        assert ordered > 0 and f"on {2 * len(temporal.RUNS)} bounded runs" in p7.check
        assert f"(integer arguments = {runs}; as program 1 of 2: {runs})" in p7.check
    else:       # nothing overlaps: no P7 pair to order
        assert {p: s for p, s in spec.items() if p != "P7"} == {**{f"P{i}": "proven" for i in range(1, 7)},
                                                               "P8": "n/a"}


def test_proof_catches_the_slot_released_before_the_store_has_read_it():
    """Drop the `tma.store_wait(0)` before consumer 0's deferred release of its epilogue slot: the producer may
    then refill B[s] while the TMA store still reads C[s] on the same bytes. P7 must name that pair (and may
    name the next epilogue's write of C[s] over the store's source beside it: the same missing wait)."""
    ttgir = kernel().ttgir
    default = ttgir[ttgir.index("ttg.warp_specialize("):]
    first = re.search(r"ttng\.async_tma_store_wait \{pendings = 0 : i32", default).start()   # 3.9 adds read_only
    start = ttgir.index("ttg.warp_specialize(") + first
    line_start = ttgir.rindex("\n", 0, start) + 1
    line_end = ttgir.index("\n", start)
    mutant = ttgir[:line_start] + ttgir[line_end + 1:]
    report = proof_report(mutant)
    p7 = [v for v in report.violations if v.prop == "P7"]
    assert p7, "P7 did not catch the early release"
    pairs = {tuple(sorted(v.data["views"])) for v in p7}
    assert ("b_ring", "c_ring") in pairs and pairs <= {("b_ring", "c_ring"), ("c_ring", "c_ring")}, pairs
    assert {v.data["ops"][0] for v in p7} == {"ttng.async_tma_copy_local_to_global"}


# ----------------------------------------------------------------------------------------------- IR / PTX

def _regions(ttgir):
    start = ttgir.index("ttg.warp_specialize(")
    rest = ttgir[start:]
    cuts = [(m.start(), m.group(1)) for m in re.finditer(r"^\s+(default|partition\d+)\b", rest, re.M)]
    regions = {"parent": ttgir[:start]}
    for (at, name), nxt in zip(cuts, [c[0] for c in cuts[1:]] + [len(rest)]):
        regions[name] = rest[at:nxt]
    return regions


@pytest.mark.parametrize("share", [True, False])
def test_ir_three_partitions_and_the_ring_barriers(share):
    k = kernel(gl.bfloat16, share)
    assert re.search(r"ttg\.warp_specialize\(.*requestedRegisters = array<i32: 240, 24>", k.ttgir)
    assert re.search(r"^\s+partition0\(.*num_warps\(4\)", k.ttgir, re.M)       # consumer 1
    assert re.search(r"^\s+partition1\(.*num_warps\(1\)", k.ttgir, re.M)       # producer
    assert ".reqntid 384" in k.ptx
    r = _regions(k.ttgir)
    # ready: count 1 (expect + TMA bytes, or the producer's hand-over); empty: count 2 (one per consumer)
    assert sorted(map(int, re.findall(r"ttng\.init_barrier %\w+, (\d+)", r["parent"]))) == \
        [1] * ws.DEFAULT_STAGES[share] + [2] * ws.DEFAULT_STAGES[share]
    assert "async_tma_copy_global_to_local" in r["partition1"] and "warp_group_dot" not in r["partition1"]
    for name in ("default", "partition0"):
        assert "async_tma_copy_global_to_local" not in r[name]
        assert r[name].count("ttng.warp_group_dot ") == 1
        assert r[name].count("ttng.async_tma_copy_local_to_global") == 1
        # the epilogue slot's release: two arrivals at once, by its only user (SHARE only)
        assert bool(re.search(r"ttng\.arrive_barrier %\w+, 2\b", r[name])) == share
    # the producer hands epilogue slots over with a plain arrival (SHARE only)
    assert bool(re.search(r"ttng\.arrive_barrier %\w+, 1\b", r["partition1"])) == share


@pytest.mark.skipif(sass.ptxas() is None, reason="no ptxas")
@pytest.mark.parametrize("share", [True, False])
def test_ptxas_keeps_the_wgmmas_asynchronous_without_spills(share):
    ptx = kernel(gl.bfloat16, share).ptx
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16", ptx)) == 8   # 4 per k-step x 2 consumers
    report = sass.ptxas_report(ptx)
    assert "serialized" not in report
    assert "0 bytes spill stores, 0 bytes spill loads" in report


def test_cpu_report_rows():
    rows = ws.cpu_report(quick=True, proof=False)
    assert [r["smem_bytes"] is not None for r in rows] == [True, False, True]
    assert "over capacity" in rows[1]["proof"]


# ----------------------------------------------------------------------------------------------- GPU

@GPU
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("M,N,K", [(1000, 1000, 1000), (777, 1032, 520), (128, 256, 64), (300, 8, 4104),
                                   (65, 264, 8), (4133, 3000, 200)])
@pytest.mark.parametrize("share", [True, False])
def test_matmul_matches_torch(M, N, K, dtype, share):
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    ws.matmul(a, b, out=c, share=share)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=0.25)


@GPU
@pytest.mark.parametrize("M,N,K", [(4096, 4096, 64), (2500, 4104, 72), (4096, 2048, 1000), (8192, 4096, 136)])
@pytest.mark.parametrize("share", [True, False])
def test_matmul_persistent_many_tiles_per_program(M, N, K, share):
    """More tiles than SMs, short K: every program runs many epilogues back to back, each holding two ring slots
    that the producer refills right after; a TMA load racing the previous TMA store out of those slots would show.
    Repeated launches must agree bit for bit."""
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    first = ws.matmul(a, b, share=share)
    torch.testing.assert_close(first.float(), a.float() @ b.float(), rtol=2e-2, atol=0.25)
    c = torch.empty_like(first)
    for _ in range(5):
        c.fill_(float("nan"))
        ws.matmul(a, b, out=c, share=share)
        assert torch.equal(c, first)


@GPU
@pytest.mark.parametrize("M,N,K", [(1000, 1000, 1000), (2500, 4104, 72), (300, 8, 4104)])
@pytest.mark.parametrize("share,stages", [(True, 7), (False, 6)])
def test_matmul_128x128_tiles(M, N, K, share, stages):
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = ws.matmul(a, b, share=share, stages=stages, BN=128)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=0.25)


@GPU
def test_matches_hopper_gemm_bit_for_bit_at_4096():
    """Same tile, same k order, fp32 accumulation: the two kernels must produce the same bits."""
    from tlx_alias.kernels import hopper_gemm as hg
    torch.manual_seed(0)
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(ws.matmul(a, b), hg.matmul(a, b))
