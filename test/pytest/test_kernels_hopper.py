"""The Hopper kernels (kernels/hopper_gemm.py, kernels/hopper_attention.py): compiled for sm_90a on the CPU.

What is checked here without a GPU: every kernel compiles in several configurations; the lowering's layout
(metadata.shared, the one backing allocation in ttgir, each view's offset from its `tlx.view` attribute);
the SMEM-capacity error of the variants without sharing; wgmma and the barriers the sharing relies on in
the PTX; the host wrappers' argument checks. Correctness against PyTorch needs a GPU (skipped here).
"""
import functools
import math
import re

import pytest
import sass
import torch
from hopper_tests import GPU, MBARRIER
from ir_text import smem_backing, views
from triton.experimental.gluon import language as gl

from tlx_alias import _triton as compat

from tlx_alias.errors import TlxAliasError
from tlx_alias.kernels import hopper_attention as ha
from tlx_alias.kernels._common import softmax_scale
from tlx_alias.kernels import hopper_gemm as hg
from tlx_alias.kernels import hopper_gemm_ws

pytestmark = pytest.mark.usefixtures("private_cache")


@functools.lru_cache(maxsize=None)
def gemm(dtype=gl.bfloat16, stages=4, share=True, BN=256, prefetch=True):
    return hg.compile_gemm(dtype, stages, share, 128, BN, 64, prefetch=prefetch)


@functools.lru_cache(maxsize=None)
def attn(dtype=gl.bfloat16, head_dim=128, causal=False, share=True, stages=2):
    return ha.compile_attention(dtype, head_dim, causal, share, stages)


def backing(ttgir):
    """Bytes of every `tlx.backing` allocation, and the count of all SMEM allocations."""
    return smem_backing(ttgir), len(re.findall(r'ttg\.local_alloc', ttgir))


def offsets(v):
    return {name: p["offset"] for name, p in v.items()}


# ----------------------------------------------------------------------------------------------- GEMM

@pytest.mark.parametrize("dtype", [gl.bfloat16, gl.float16])
def test_gemm_shared_epilogue_fits_4_stages(dtype):
    """128x256x64, 4 stages: ring 4 x (32 + 16) KiB = 192 KiB; C (64 KiB) lies on B[0..1]."""
    k = gemm(dtype)
    plan = hg.smem_plan(stages=4, share=True)
    assert plan["spec"] == 196608
    assert k.smem_bytes == 196608 + 4 * MBARRIER
    tagged, n_allocs = backing(k.ttgir)
    assert tagged == [196608]                 # one backing allocation
    assert n_allocs == 2                      # + the mbarriers
    v = views(k.ttgir)
    assert offsets(v) == {"b_ring": 0, "a_ring": 131072, "c_smem": 0}
    assert v["a_ring"]["slot"] == 16384 and v["a_ring"]["radices"] == (4,)
    assert v["b_ring"]["slot"] == 32768 and v["b_ring"]["strides"] == (32768,)
    assert v["c_smem"]["slot"] == 65536
    name = "bf16" if dtype == gl.bfloat16 else "f16"
    if compat.SUBSLICE_ANY_SHAPE:    # each view spans the backing rows of its own buffers, and says where
        assert v["a_ring"]["base"] == 131072 and v["c_smem"]["base"] == 0
        assert v["a_ring"]["type"].startswith(f"!ttg.memdesc<4x128x64x{name}")
        assert v["c_smem"]["type"].startswith(f"!ttg.memdesc<1x128x256x{name}")
    else:                            # every view reinterprets the whole backing from its start
        assert v["a_ring"]["base"] == 0 and v["c_smem"]["base"] == 0
        assert v["a_ring"]["type"].startswith(f"!ttg.memdesc<12x128x64x{name}")
        assert v["c_smem"]["type"].startswith(f"!ttg.memdesc<3x128x256x{name}")
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32" in k.ptx


def test_gemm_without_sharing_is_over_capacity_at_4_stages():
    with pytest.raises(TlxAliasError) as info:
        hg.compile_gemm(gl.bfloat16, 4, False)
    err = info.value
    assert "shared memory over capacity: this spec needs 262144 bytes, the target allows 232448" in str(err)
    assert err.src and re.search(r"hopper_gemm\.py:\d+$", err.src)
    line = open(hg.__file__).read().splitlines()[int(err.src.rsplit(":", 1)[1]) - 1]
    assert "tlx.storage_alias_spec" in line    # the error names the spec's line


def test_gemm_without_sharing_fits_3_stages():
    """One index group: the 212992-byte stride is never used, so it need not be a multiple of C's 64 KiB.
    (Triton 3.8 reinterprets only whole allocations: padded to 262144 bytes, it does not fit there.)"""
    if compat.REINTERPRET_KEEPS_SIZE:
        with pytest.raises(TlxAliasError, match="needs 262144 bytes, the target allows 232448"):
            gemm(stages=3, share=False)
        return
    k = gemm(stages=3, share=False)
    assert k.smem_bytes == 64 * 1024 + 3 * 48 * 1024 + 3 * MBARRIER
    assert offsets(views(k.ttgir)) == {"c_smem": 0, "b_ring": 65536, "a_ring": 163840}


@pytest.mark.parametrize("stages,share,spec", [(4, True, 131072), (4, False, 163840), (3, True, 98304),
                                               (3, False, 131072)])
def test_gemm_128x128_tiles(stages, share, spec):
    """Smaller tiles (C 32 KiB, A and B stages 16 KiB each): both variants compile."""
    k = gemm(stages=stages, share=share, BN=128)
    assert hg.smem_plan(stages, share, 128, 128, 64)["spec"] == spec
    assert k.smem_bytes == spec + stages * MBARRIER
    assert offsets(views(k.ttgir))["c_smem"] == 0
    assert offsets(views(k.ttgir))["b_ring"] == (0 if share else 32768)


def _ptx_lines(ptx):
    return [line.strip() for line in ptx.splitlines() if line.strip() and not line.strip().startswith("//")]


TMA_LOAD = "cp.async.bulk.tensor"
TMA_LOAD_TAIL = "global.mbarrier::complete_tx::bytes"


def _barriers_after_wgmma(ptx):
    """Every TMA load and every epilogue store into SMEM comes after a CTA barrier that follows the last
    wgmma before it (in PTX text order). Returns (#TMA loads, #SMEM stores) seen."""
    last_wgmma = last_barrier = -1
    loads = stores = 0
    for i, line in enumerate(_ptx_lines(ptx)):
        if line.startswith("wgmma."):
            last_wgmma = i
        elif line.startswith("bar.sync") or line.startswith("barrier.sync"):
            last_barrier = i
        elif line.startswith("@") and TMA_LOAD in line and TMA_LOAD_TAIL in line:
            loads += 1
            assert last_barrier > last_wgmma, f"TMA load at PTX line {i} not behind a barrier after a wgmma"
        elif line.startswith("stmatrix") or line.startswith("st.shared"):
            stores += 1
            assert last_barrier > last_wgmma, f"SMEM store at PTX line {i} not behind a barrier after a wgmma"
    return loads, stores


def _tma_ops(ttgir):
    return re.findall(r"ttng\.(async_tma_store_wait|async_tma_copy_global_to_local|async_tma_copy_local_to_global)",
                      ttgir)


def test_gemm_barriers_guard_the_shared_ring():
    """The synchronization the docstring relies on (8 warps = 2 warpgroups).

    PTX: a CTA barrier between any wgmma and the next TMA load (a lagging warpgroup may still read the
    stage), and between the epilogue's wgmma wait and its stores into c_smem (which overlaps the ring).
    ttgir (structured, so text order is program order inside the tile loop): the epilogue's TMA store is
    followed by store_wait(0) before any further TMA load (the B tiles under c_smem), and the kernel ends
    with a store_wait."""
    loads, stores = _barriers_after_wgmma(gemm().ptx)
    assert loads >= 2 * 4 and stores > 0  # prologue (A and B of 3 stages) + main loop; the epilogue

    ops = _tma_ops(gemm().ttgir)
    store_at = [i for i, op in enumerate(ops) if op == "async_tma_copy_local_to_global"]
    assert len(store_at) == 1
    after = ops[store_at[0] + 1:]
    assert after[0] == "async_tma_store_wait"                       # (4) before the deferred B loads
    assert "async_tma_copy_global_to_local" in after[1:]             # the deferred B loads ...
    assert after[-1] == "async_tma_store_wait"                       # ... and the kernel's final wait
    before = ops[:store_at[0]]
    assert "async_tma_store_wait" not in before                      # nothing waits before the first store


def test_gemm_without_prefetch_waits_before_every_tile():
    """PREFETCH=False keeps the simpler schedule: store_wait(0) -> the tile's loads -> its TMA store."""
    ops = _tma_ops(gemm(prefetch=False).ttgir)
    loads_at = [i for i, op in enumerate(ops) if op == "async_tma_copy_global_to_local"]
    store_at = [i for i, op in enumerate(ops) if op == "async_tma_copy_local_to_global"]
    waits_at = [i for i, op in enumerate(ops) if op == "async_tma_store_wait"]
    assert len(store_at) == 1 and len(waits_at) == 2
    assert waits_at[0] < loads_at[0] and loads_at[-1] < store_at[0] < waits_at[1]


# ----------------------------------------------------------------------------------------------- attention

@pytest.mark.parametrize("dtype,head_dim,causal,stages,share", [
    (gl.bfloat16, 128, False, 2, True),
    (gl.bfloat16, 128, False, 2, False),
    (gl.bfloat16, 128, True, 3, True),
    (gl.float16, 64, True, 2, True),
    (gl.float16, 64, False, 3, False),
])
def test_attention_compiles_and_layout(dtype, head_dim, causal, stages, share):
    k = attn(dtype, head_dim, causal, share, stages)
    plan = ha.smem_plan(head_dim, stages, share)
    barriers = k.smem_bytes - plan["spec"]     # q_bar, k_ready, v_ready: 8 B each, allocations 16-B aligned
    assert (1 + 2 * stages) * MBARRIER <= barriers <= 16 * (1 + 2 * stages)
    tagged, n_allocs = backing(k.ttgir)
    assert tagged == [plan["spec"]]
    assert n_allocs == 4                       # the backing allocation + q_bar, k_ready, v_ready
    tile = 128 * head_dim * 2
    q_end = tile if share else 2 * tile
    assert offsets(views(k.ttgir)) == {"q_smem": 0, "o_smem": 0 if share else tile, "k_ring": q_end,
                                       "v_ring": q_end + stages * tile}
    assert k.ptx.count("wgmma.mma_async") >= 2
    assert f"wgmma.mma_async.sync.aligned.m64n{head_dim}k16" in k.ptx   # P V: n = head dim
    assert "cp.async.bulk.tensor.3d" in k.ptx                          # rank-3 TMA: S bounds-checked per head


def test_attention_third_kv_stage_needs_sharing():
    """D=128, 3 K/V stages: 32 + 3 x 64 = 224 KiB with O on Q; 256 KiB without."""
    assert attn(gl.bfloat16, 128, True, True, 3).smem_bytes == 229376 + 72    # + q_bar, k_ready[3], v_ready[3]
    with pytest.raises(TlxAliasError, match="shared memory over capacity: this spec needs 262144 bytes"):
        ha.compile_attention(gl.bfloat16, 128, True, False, 3)


@pytest.mark.parametrize("stages", [2, 3])
def test_attention_ptx_barriers(stages):
    """K/V reloads and O's stores into Q's bytes come after a CTA barrier that follows the last wgmma."""
    loads, stores = _barriers_after_wgmma(attn(stages=stages).ptx)
    assert loads >= 2 * stages and stores > 0
    lines = _ptx_lines(attn(stages=stages).ptx)
    first_stmatrix = next(i for i, line in enumerate(lines) if line.startswith("stmatrix") or
                          line.startswith("st.shared"))
    before = lines[:first_stmatrix]
    last_wait = max(i for i, line in enumerate(before) if line.startswith("wgmma.wait_group.sync.aligned 0"))
    assert any(line.startswith("bar.sync") for line in before[last_wait:])


def test_kernels_are_proven_safe():
    """The Z3 verifier proves the lowered layouts of the main configurations."""
    from tlx_alias.kernels._common import proof_of
    assert proof_of(gemm()) == "ok"
    assert proof_of(attn(gl.bfloat16, 128, True, True, 3)) == "ok"


@pytest.mark.skipif(sass.disassembler() is None, reason="no nvdisasm")
@pytest.mark.parametrize("head_dim,causal,stages", [(128, False, 2), (64, True, 3), (128, True, 3)])
def test_sass_each_exp2_is_fed_by_an_fma(head_dim, causal, stages):
    """The softmax scales the row max once per row and each score inside the FFMA that makes its exp2's argument
    (qk * qk_scale - m), so the kernel has at least as many FFMA as MUFU.EX2 (a product per score and a separate
    subtraction before each exp2 leave about half as many)."""
    code = sass.disassemble(attn(gl.bfloat16, head_dim, causal, True, stages).kernel.asm["cubin"])
    ffma = len(re.findall(r"\bFFMA\b", code))
    ex2 = code.count("MUFU.EX2")
    assert ex2 > 0 and ffma >= ex2, (ffma, ex2)


# ----------------------------------------------------------------------------------------------- host checks

def test_host_wrappers_reject_bad_arguments():
    a = torch.randn(64, 32, dtype=torch.bfloat16)
    for matmul, who in ((hg.matmul, "matmul"), (hopper_gemm_ws.matmul, "matmul_ws")):   # _common.check_matmul
        with pytest.raises(ValueError, match=f"{who}: inner dimensions differ"):
            matmul(a, torch.randn(16, 64, dtype=torch.bfloat16))
        with pytest.raises(TypeError, match="float16 or bfloat16"):
            matmul(a.float(), torch.randn(32, 64))
        with pytest.raises(ValueError, match="CUDA"):
            matmul(a, torch.randn(32, 64, dtype=torch.bfloat16))
    q = torch.randn(1, 2, 100, 96, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="same shape"):
        ha.attention(q, q[:, :1], q)
    with pytest.raises(ValueError, match="CUDA|head dim"):
        ha.attention(q, q, q)
    # the attention kernels scale the row max of the raw scores (max(x) * c = max(x * c) only for c > 0)
    for scale in (0.0, -0.125, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="attention: sm_scale must be a positive finite number"):
            softmax_scale(scale, 64, "attention")


# ----------------------------------------------------------------------------------------------- GPU

@GPU
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("M,N,K", [(1000, 1000, 1000), (777, 1032, 520), (128, 256, 64), (300, 8, 4104)])
@pytest.mark.parametrize("cfg", [dict(stages=4, share=True), dict(stages=4, share=True, BN=128),
                                 dict(stages=4, share=False, BN=128), dict(stages=3, share=True),
                                 dict(stages=4, share=True, prefetch=False)])
def test_matmul_matches_torch(M, N, K, dtype, cfg):
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    hg.matmul(a, b, out=c, **cfg)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=0.25)


@GPU
@pytest.mark.parametrize("M,N,K", [(4096, 4096, 64), (2500, 4104, 72), (4096, 2048, 1000)])
@pytest.mark.parametrize("share", [True, False])
@pytest.mark.parametrize("prefetch", [True, False])
def test_matmul_persistent_many_tiles_per_program(M, N, K, share, prefetch):
    """More tiles than SMs, short K: every program runs several epilogues back to back, so a TMA load of
    the next tile racing the previous tile's TMA store out of c_smem (which lies on the ring) would show.
    Repeated launches must agree bit for bit."""
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    cfg = dict(stages=4, share=True) if share else dict(stages=4, share=False, BN=128)
    cfg["prefetch"] = prefetch
    first = hg.matmul(a, b, **cfg)
    torch.testing.assert_close(first.float(), a.float() @ b.float(), rtol=2e-2, atol=0.25)
    c = torch.empty_like(first)
    for _ in range(5):
        c.fill_(float("nan"))
        hg.matmul(a, b, out=c, **cfg)
        assert torch.equal(c, first)


@GPU
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("B,H,S", [(1, 2, 1000), (2, 3, 256), (1, 1, 77)])
@pytest.mark.parametrize("cfg", [dict(share=True, KV_STAGES=2), dict(share=True, KV_STAGES=3),
                                 dict(share=False, KV_STAGES=2)])
def test_attention_matches_reference(B, H, S, head_dim, causal, dtype, cfg):
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, S, head_dim, device="cuda", dtype=dtype) for _ in range(3))
    scale = 1.0 / math.sqrt(head_dim)
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    lse_ref = s.logsumexp(-1)
    o_ref = (s - lse_ref[..., None]).exp() @ v.float()
    o, lse = ha.attention(q, k, v, causal, scale, **cfg)
    torch.testing.assert_close(o.float(), o_ref, rtol=0, atol=2e-2)
    torch.testing.assert_close(lse, lse_ref, rtol=0, atol=1e-2)
