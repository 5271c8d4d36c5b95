"""The Blackwell kernels (kernels/blackwell_attention.py, kernels/blackwell_gemm.py): compiled for sm_100a on the CPU.

What is checked here without a GPU: every kernel compiles to a cubin in several configurations (head dim 64/128,
causal or not, 1/2/4 P sub-tiles, bf16/fp16; GEMM stages, BLOCK_K, output dtype); the lowering's layout
(`metadata.tmem_size`, `metadata.shared`, the backing allocations and each view's `tlx.view` placement in the
ttgir, the rewritten P indices), written out as seed 000's hand calculation; the comparison with upstream's
hand-aliased attention; the variants without sharing that no longer fit; tcgen05 in the PTX; the host wrappers'
argument checks. Running the kernels needs a Blackwell GPU (those tests skip here).
"""
import functools
import re

import pytest
from ir_text import smem_backing, tmem_backing, views
import torch
from triton.experimental.gluon import language as gl

from tlx_alias.kernels import blackwell_attention as bwa
from tlx_alias.kernels import blackwell_gemm as bwg
from tlx_alias.errors import TlxAliasError
from tlx_alias.kernels._common import SMEM_LIMIT, fit_error, proof_of

pytestmark = pytest.mark.usefixtures("private_cache")

BLACKWELL_GPU = pytest.mark.skipif(
    not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10),
    reason="needs a Blackwell (sm_100) GPU")
MBARRIER = 8     # bytes per mbarrier (allocated outside the specs)
SCRATCH = 1024   # bound on what Triton adds to metadata.shared besides our buffers and barriers


@functools.lru_cache(maxsize=None)
def attn(head_dim=128, causal=False, S=2, dtype=gl.bfloat16, kv=None, alias_tmem=True, alias_smem=True):
    return bwa.compile_attention(head_dim, causal, S, dtype, kv, alias_tmem, alias_smem)


@functools.lru_cache(maxsize=None)
def gemm(block_k=64, stages=4, dtype=gl.bfloat16, c_dtype=None, alias=True):
    return bwg.compile_matmul(128, 128, block_k, stages, dtype, c_dtype, alias_epilogue=alias)


def placement(v, *names):
    """(offset, stride, units of one buffer) per view: a buffer is its slot, or `width` units of it."""
    return {n: (v[n]["offset"], v[n]["stride"], v[n]["width"] or v[n]["slot"]) for n in names}


def buffer_columns(ttgir, name, view):
    """The columns the `.index()` calls whose result is named `name` select, read from the IR: the rewritten
    constant slot, times the view's slot, plus the column of the `ttng.tmem_subslice` that selects the buffer in
    its slot where buffers are windows of their slots (Triton 3.9's column windows)."""
    slots = rewritten_constants(ttgir, name)
    if not view["width"]:
        return [s * view["slot"] for s in slots]
    cols = {int(c) for c in re.findall(rf'%{name}(?:_\d+)? = ttng\.tmem_subslice %\S+ \{{offset = (\d+) : i32\}}',
                                        ttgir)}
    return sorted(s * view["slot"] + c for s in slots for c in cols)


def rewritten_constants(ttgir, name):
    """Values of the constant indices the lowering wrote for `.index()` calls whose result is named `name`."""
    return sorted({int(v) for v in re.findall(
        rf'%{name}(?:_\d+)? = arith\.constant \{{tlx\.index_rewrite = "", tlx\.logical_index = \d+ : i64\}} (\d+) : i32',
        ttgir)})


# ----------------------------------------------------------------------------------------------- attention

ATTN_CONFIGS = [  # (HEAD_DIM, causal, S = NUM_MMA_SLICES, dtype)
    (64, False, 2, gl.bfloat16),
    (64, True, 4, gl.float16),
    (64, False, 1, gl.float16),
    (128, False, 2, gl.float16),
    (128, True, 2, gl.bfloat16),
    (128, False, 4, gl.bfloat16),
]


@pytest.mark.parametrize("D, causal, S, dtype", ATTN_CONFIGS,
                         ids=[f"D{d}-{'causal' if c else 'full'}-S{s}-{'bf16' if t == gl.bfloat16 else 'fp16'}"
                              for d, c, s, t in ATTN_CONFIGS])
def test_attention_compiles_for_sm100(D, causal, S, dtype):
    k = attn(D, causal, S, dtype)
    assert k.kernel.asm["cubin"]                          # a full cubin for sm_100a
    kv = 3 if D == 128 else 6
    # TMEM: the tree's backing is 2 groups x 128 columns; O adds 2 x D; Triton allocates a power of two.
    assert tmem_backing(k.ttgir) == [256]
    assert k.tmem_cols == 512
    assert re.search(r"tcgen05\.alloc\.cta_group::1\.sync\.aligned\.shared::cta\.b32 \[%r\d+\], 512;", k.ptx)
    # SMEM: the Q/O spec (2 x 128 x D x 2 bytes, Q and O in the same bytes), the K/V ring, 12 + 2 + 2 kv barriers.
    q_tiles = 2 * 128 * D * 2
    assert smem_backing(k.ttgir) == [q_tiles]
    data = q_tiles + kv * 128 * D * 2 + (16 + 2 * kv) * MBARRIER
    assert data == bwa.smem_bytes(D) + (16 + 2 * kv) * MBARRIER
    assert data <= k.smem_bytes < data + SCRATCH
    # tcgen05 MMAs (QK from SMEM, PV with P read from TMEM), every one asynchronous (barrier-tracked).
    assert "tcgen05.mma" in k.ptx
    mmas = [line for line in k.ttgir.splitlines() if "ttng.tc_gen5_mma" in line]
    assert len(mmas) == 4 + 4 * S and all("{is_async}" in line for line in mmas)   # 4 QK + 4 calls x S PV
    a_in_tmem = [m for m in mmas if "#ttng.tensor_memory" in m.split(" : ", 1)[1].split(">,", 1)[0]]
    assert len(a_in_tmem) == 4 * S                         # PV: A = P, a view of the S columns in TMEM


@pytest.mark.parametrize("S", [1, 2, 4])
def test_seed000_tree_hand_calculation(S):
    """Seed 000's tree for BLOCK_M = 2 x 128, BLOCK_N = 128, NUM = 2 groups, S P sub-tiles, by hand:

      qk_tiles    128 x 128 fp32                     = 128 columns per buffer
      p_tiles     128 x (128 / S) bf16, packed 2/col = 64 / S columns per sub-tile; S sub-tiles = 64 columns
      alpha, l, m 128 x 1 fp32                       = 1 column each
      distinct(P group, alpha, l, m) = 64 + 1 + 1 + 1 = 67 <= 128 = shared(qk, distinct) per buffer index
      offsets in a group: P 0, alpha 64, l 65, m 66; stride between groups 128; backing 2 x 128 = 256 columns
      P's view: 256 / (64 / S) = 4 S slots of 64 / S columns; p_tiles.index(j) -> (j // S) * (128 / (64 / S))
      + j % S, so group 0's sub-tiles are slots 0 .. S-1 and group 1's start at slot 2 S (column 128).
    """
    k = attn(128, False, S)
    v = views(k.ttgir)
    sub = 64 // S
    assert placement(v, "qk_tiles", "p_tiles", "alpha_tiles", "l_tiles", "m_tiles") == {
        "qk_tiles": (0, 128, 128), "p_tiles": (0, 128, sub), "alpha_tiles": (64, 128, 1),
        "l_tiles": (65, 128, 1), "m_tiles": (66, 128, 1)}
    assert v["p_tiles"]["group"] == S and v["p_tiles"]["num"] == 2 * S
    assert v["p_tiles"]["radices"] == (() if S == 1 else (S,))
    assert v["p_tiles"]["type"].startswith(f"!ttg.memdesc<{4 * S}x128x{128 // S}xbf16")
    assert tmem_backing(k.ttgir) == [256]
    # The MMA warp's P operands (p_tiles.index(g * S + s)) after the index rewrite.
    expected = sorted({(j // S) * (128 // sub) + j % S for j in range(2 * S)})
    assert rewritten_constants(k.ttgir, "p_sub") == expected == sorted(
        list(range(S)) + list(range(2 * S, 3 * S)))
    # alpha[g], l[g], m[g] land in columns 64 + 128 g, 65 + 128 g, 66 + 128 g (1-column slots, or on 3.9 slot g
    # of 128 columns and its column 64, 65 or 66).
    assert buffer_columns(k.ttgir, "alpha", v["alpha_tiles"]) == [64, 192]
    assert buffer_columns(k.ttgir, "l_i", v["l_tiles"]) == [65, 193]
    assert buffer_columns(k.ttgir, "m_i", v["m_tiles"]) == [66, 194]
    # The SMEM tree: Q and the output tile at the same offsets.
    assert placement(v, "q_tiles", "o_tiles") == {"q_tiles": (0, 32768, 32768), "o_tiles": (0, 32768, 32768)}


@pytest.mark.parametrize("D", [64, 128])
def test_attention_vs_upstream_hand_aliased(D):
    """Upstream's `01-attention-forward.py` for the same tile (allocation code read, not imported):

      TMEM  S0, S1: 2 x [128, 128] fp32 = 256 cols; O: 2 x [128, D] fp32 = 2 D cols; P, alpha, m, l borrowed
            from S (`_borrow_s_as_p`: columns 0..63; `_borrow_s_as_alpha`: column 64; `_borrow_s_for_epilogue`:
            65, 66) -> 256 + 2 D = 384 (D 64, allocated 512) / 512 (D 128)
      SMEM  Q 2 x 128 D x 2 B, K/V ring kv x 128 D x 2 B (kv = 6 for D 64, 3 for D 128), output staging
            2 x 128 D x 2 B -> D 64: 32768 + 98304 + 32768 = 163840; D 128: 65536 + 98304 + 65536 = 229376
    Ours: the same TMEM columns (the tree reproduces the borrowed columns) and the SMEM less the staging tiles.
    """
    up = bwa.upstream_design(D)
    kv = 6 if D == 64 else 3
    assert up["tmem_cols"] == 256 + 2 * D
    assert up["smem_bytes"] == 2 * 128 * D * 2 + kv * 128 * D * 2 + 2 * 128 * D * 2 == {64: 163840, 128: 229376}[D]
    k = attn(D)
    assert bwa.tmem_columns(D) == up["tmem_cols"]           # equal before rounding ...
    assert k.tmem_cols == up["tmem_alloc"] == 512            # ... and as allocated
    assert bwa.smem_bytes(D) == up["smem_bytes"] - 2 * 128 * D * 2
    assert k.smem_bytes < up["smem_bytes"]                   # smaller by the staging tiles, barriers included
    assert up["smem_bytes"] - k.smem_bytes >= 2 * 128 * D * 2 - SCRATCH


def test_attention_without_sharing_does_not_fit():
    # Five separate TMEM allocations: 2 x 128 + 2 x 64 + 3 x 2 + 2 D > 512 for both head dims.
    assert bwa.tmem_columns(64, alias=False) == 518 and bwa.tmem_columns(128, alias=False) == 646
    # triton 3.6 alone would compile them with no tcgen05.alloc at all; the plugin (the kernel still uses a
    # spec for its SMEM) stops the compile once Triton has placed every buffer.
    for D in (64, 128):
        with pytest.raises(TlxAliasError, match=r"the kernel needs (\d+) tensor-memory columns, the SM has 512") as e:
            attn(D, alias_tmem=False)
        # Triton places them (3.6: 524 / 652 columns, 3.9: 576 / 704, alignment padding): never fewer
        assert int(re.search(r"needs (\d+) tensor", str(e.value)).group(1)) >= bwa.tmem_columns(D, alias=False)
        # a whole-kernel error points at the kernel's definition line
        assert re.match(r".*blackwell_attention\.py:\d+: error: \[tlx-alias capacity\]", str(e.value))
    # SMEM: with Q/O shared, 5 K/V slots fit for D 128; with separate output tiles they do not.
    shared = attn(128, kv=5)
    assert fit_error(shared) is None and shared.smem_bytes <= SMEM_LIMIT
    with pytest.raises(TlxAliasError, match=f"needs {shared.smem_bytes + 2 * 128 * 128 * 2} bytes of shared memory"):
        attn(128, kv=5, alias_smem=False)


def test_attention_proof_and_report():
    assert proof_of(attn(128)) == "ok"
    rows = bwa.cpu_report(quick=True, proof=False)
    assert [r["kernel"] for r in rows] == ["blackwell_attention", "blackwell_attention (separate TMEM)",
                                           "blackwell_attention (separate SMEM)"]
    assert all(set(r) == {"kernel", "config", "target", "smem_bytes", "tmem_cols", "compile_s", "proof"} for r in rows)
    assert rows[0]["tmem_cols"] == 512 and rows[0]["target"] == "sm_100a"
    assert rows[1]["smem_bytes"] is None and "the kernel needs 652 tensor-memory columns" in rows[1]["proof"]
    assert rows[2]["smem_bytes"] - rows[0]["smem_bytes"] == 2 * 128 * 128 * 2


def test_attention_wrapper_checks():
    q = torch.zeros(1, 2, 256, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="one shape"):
        bwa.attention(q, q[:, :, :128], q)
    with pytest.raises(ValueError, match="bfloat16 or float16"):
        bwa.attention(q.float(), q.float(), q.float())
    with pytest.raises(ValueError, match="HEAD_DIM must be 64 or 128"):
        x = torch.zeros(1, 2, 256, 32, dtype=torch.bfloat16)
        bwa.attention(x, x, x)
    with pytest.raises(ValueError, match="multiple of 256"):
        x = torch.zeros(1, 2, 384, 64, dtype=torch.bfloat16)
        bwa.attention(x, x, x)
    if not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10):
        with pytest.raises(RuntimeError, match="needs a Blackwell GPU"):
            bwa.attention(q, q, q)


# ----------------------------------------------------------------------------------------------- GEMM

GEMM_CONFIGS = [  # (BLOCK_K, STAGES, dtype, c_dtype)
    (64, 2, gl.bfloat16, None),
    (64, 4, gl.float16, None),
    (64, 7, gl.bfloat16, None),
    (128, 3, gl.float16, None),
    (32, 8, gl.bfloat16, gl.float32),
]


@pytest.mark.parametrize("BK, stages, dtype, c_dtype", GEMM_CONFIGS,
                         ids=[f"BK{bk}-st{st}-{'bf16' if d == gl.bfloat16 else 'fp16'}{'-f32out' if c else ''}"
                              for bk, st, d, c in GEMM_CONFIGS])
def test_gemm_compiles_for_sm100(BK, stages, dtype, c_dtype):
    k = gemm(BK, stages, dtype, c_dtype)
    assert k.kernel.asm["cubin"]
    assert k.tmem_cols == 256                                  # 2 x 128 x 128 fp32 accumulators
    assert "tcgen05.mma" in k.ptx and "cp.async.bulk.tensor" in k.ptx
    # One ring slot = A (128 x BK) + B (BK x 128), 2 bytes each; the C sub-tiles (2 x 128 x EPI_N) fit inside it.
    slot = 2 * 128 * BK * 2
    out_bytes = 4 if c_dtype == gl.float32 else 2
    epi_n = bwg.epilogue_n(128, 128, BK, 2, out_bytes)
    assert epi_n == {(64, 2): 64, (128, 2): 64, (32, 4): 16}[BK, out_bytes]
    assert 2 * 128 * epi_n * out_bytes <= slot
    assert smem_backing(k.ttgir) == [stages * slot]            # the whole ring, C included
    data = stages * slot + (2 * stages + 4) * MBARRIER
    assert data <= k.smem_bytes < data + SCRATCH
    v = views(k.ttgir)
    assert placement(v, "a_ring", "b_ring", "c_tiles") == {
        "a_ring": (0, slot, slot // 2), "b_ring": (slot // 2, slot, slot // 2),
        "c_tiles": (0, slot, 128 * epi_n * out_bytes)}
    assert v["c_tiles"]["group"] == 2 and v["c_tiles"]["num"] == 2 * stages


def test_gemm_separate_epilogue():
    """Without the tree C needs its own 2 x 128 x 64 x 2 bytes: 6 stages still fit, 7 do not."""
    for stages in (4, 6):
        assert gemm(64, stages, alias=False).smem_bytes - gemm(64, stages).smem_bytes == 2 * 128 * 64 * 2
    assert bwg.smem_plan(128, 128, 64, 7, alias=False) == 7 * 32768 + 32768 > SMEM_LIMIT
    assert fit_error(gemm(64, 7)) is None
    assert fit_error(gemm(64, 7, alias=False)).startswith("does not fit: 262")
    assert "tlx.view" not in gemm(64, 4, alias=False).ttgir


def test_gemm_epilogue_synchronisation_in_ir():
    """The epilogue owns its ring slot between two barriers: the load warp arrives on the slot's `ready` barrier
    without a TMA load (the hand-off) and the epilogue arrives on its `empty` barrier after draining its stores."""
    ttgir = gemm(64, 4).ttgir
    partitions = re.split(r"\n\s*partition\d+\(", ttgir)
    default = partitions[0][partitions[0].index("ttg.warp_specialize"):]
    load = next(p for p in partitions[1:] if "async_tma_copy_global_to_local" in p)
    assert "ttng.arrive_barrier" in load                                  # the hand-off
    store_wait = [m.start() for m in re.finditer(r"ttng\.async_tma_store_wait \{pendings = 0 : i32[^}]*\}", default)]
    arrives = [m.start() for m in re.finditer(r"ttng\.arrive_barrier", default)]
    assert store_wait and arrives and any(a > store_wait[0] for a in arrives)
    assert "ttng.fence_async_shared" in default
    assert proof_of(gemm(64, 4)) == "ok"


def test_gemm_report_and_wrapper_checks():
    rows = bwg.cpu_report(quick=True, proof=False)
    assert [r["kernel"] for r in rows] == ["blackwell_gemm", "blackwell_gemm (separate epilogue)"]
    assert rows[0]["smem_bytes"] <= SMEM_LIMIT and rows[0]["tmem_cols"] == 256
    assert rows[1]["smem_bytes"] is None and rows[1]["proof"].startswith("does not fit")
    a = torch.zeros(256, 128, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"a \[M, K\] and b \[K, N\]"):
        bwg.matmul(a, a)
    with pytest.raises(ValueError, match="bfloat16 or both float16"):
        bwg.matmul(a, a.t().to(torch.float16))
    with pytest.raises(ValueError, match="supported tiles"):
        bwg.matmul(a, a.t(), block_n=256)
    if not (torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10):
        with pytest.raises(RuntimeError, match="needs a Blackwell GPU"):
            bwg.matmul(a, a.t())


# ----------------------------------------------------------------------------------------------- GPU runs

@BLACKWELL_GPU
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("S", [2, 4])
def test_attention_matches_torch(D, causal, S):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 512, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o, lse = bwa.attention(q, k, v, causal=causal, sm_scale=0.5, num_mma_slices=S)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.5)
    torch.testing.assert_close(o, ref, atol=2e-2, rtol=0)
    scores = (q.float() @ k.float().transpose(-1, -2)) * 0.5
    if causal:
        scores = scores.masked_fill(torch.ones(512, 512, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    torch.testing.assert_close(lse, torch.logsumexp(scores, dim=-1), atol=1e-2, rtol=0)


@BLACKWELL_GPU
@pytest.mark.parametrize("M, N, K", [(128, 128, 64), (1000, 744, 520), (4096, 4096, 4096)])
@pytest.mark.parametrize("out_dtype", [None, torch.float32])
def test_matmul_matches_torch(M, N, K, out_dtype):
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = bwg.matmul(a, b, out_dtype=out_dtype)
    ref = (a.float() @ b.float()).to(c.dtype)
    torch.testing.assert_close(c, ref, atol=1e-1, rtol=1e-2)
