"""Shared helpers for the kernels in `tlx_alias.kernels`: compile for a target on the CPU, time on a GPU.

The API is small on purpose (Hopper and Blackwell kernels both use it):

Compiling (no GPU needed)
    HOPPER, BLACKWELL                   GPUTarget("cuda", 90 | 100, 32)
    tensordesc(dtype, block, layout)    signature string of a Gluon host TensorDescriptor argument
    compile_for(fn, signature, constexprs, target, num_warps=4) -> Compiled
                                        triton.compile(GluonASTSource(...)) through the tlx-alias plugin;
                                        Compiled has .kernel, .compile_s, .smem_bytes, .tmem_cols, .ttgir, .ptx,
                                        .source and .options (what to pass triton.compile to build it again)
    proof_of(compiled) -> str           what `tlx-verify` answers on the kernel's dumped ttgir: "ok",
                                        "VIOLATION (n)" or "cannot prove (n)"
    report_row(kernel, config, compiled) -> dict
                                        one row of a `cpu_report()`: {kernel, config, target, smem_bytes,
                                        tmem_cols, compile_s, proof}

Device helpers (@gluon.jit)
    online_softmax(j, qk, m_i, l_i, rows, seq_len, qk_scale, MASKED, CAUSAL, BLOCK_N) -> (p, alpha, m, l)
                                        one K/V block of the attention kernels' online softmax (base 2)
    tile_offsets(tile_id, num_pid_m, num_pid_n, GROUP_M, BLOCK_M, BLOCK_N) -> (off_m, off_n)
                                        a persistent GEMM's output tiles in grouped order (GROUP_M row tiles
                                        share their B columns in L2)

Host wrappers
    gl_dtype(torch_dtype)               the Gluon dtype of a torch float16 / bfloat16 / float32 tensor, or None
    check_attention(q, k, v, o, lse, who, head_dims)
                                        the operand checks of the Hopper attention wrappers
    check_matmul(a, b, out, who)        the operand checks of the TMA GEMMs (2-D, same 16-bit dtype, CUDA,
                                        row-major, 16-byte aligned rows), raising with `who` in the message

Every kernel module also exposes `cpu_report() -> list[dict]` built from `report_row`, which
`python benchmarks/kernel_bench.py` prints on a machine without a GPU.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

from tlx_alias import targets
from tlx_alias.errors import TlxAliasError
from tlx_alias.plugin import hook
from tlx_alias.verify import prove_module
from tlx_alias.verify.source import load_triton

HOPPER = GPUTarget("cuda", 90, 32)
BLACKWELL = GPUTarget("cuda", 100, 32)

_DTYPE_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float8_e4m3fn": "fp8e4nv",
                "float8_e5m2": "fp8e5", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32"}


def dtype_name(dtype) -> str:
    """Triton's signature name of a torch or gl dtype (`torch.bfloat16`, `gl.bfloat16` -> "bf16")."""
    key = str(dtype).rsplit(".", 1)[-1]
    try:
        return _DTYPE_NAMES[key]
    except KeyError:
        raise ValueError(f"unsupported dtype {dtype!r}") from None


def tensordesc(dtype, block_shape, layout) -> str:
    """Signature string of a Gluon TensorDescriptor argument, as the JIT would derive it from the host object."""
    return f"tensordesc<{dtype_name(dtype)}[{','.join(str(int(s)) for s in block_shape)}],{layout!r}>"


@dataclass
class Compiled:
    kernel: object            # triton.compiler.CompiledKernel
    target: GPUTarget
    compile_s: float
    source: object = None     # the GluonASTSource and options it was compiled from (to compile it again,
    options: dict | None = None  # e.g. without the plugin: benchmarks/compile_overhead.py)

    @property
    def smem_bytes(self) -> int:
        return int(self.kernel.metadata.shared)

    @property
    def tmem_cols(self) -> int:
        return int(getattr(self.kernel.metadata, "tmem_size", 0) or 0)

    @property
    def ttgir(self) -> str:
        return self.kernel.asm["ttgir"]

    @property
    def ptx(self) -> str:
        return self.kernel.asm["ptx"]

    @property
    def target_name(self) -> str:
        return f"sm_{self.target.arch}a"


def compile_for(fn, signature: dict, constexprs: dict | None = None, target: GPUTarget = HOPPER,
                num_warps: int = 4, **options) -> Compiled:
    """Compile a @gluon.jit kernel for `target` on this machine (no GPU needed), through the plugin.

    `signature` maps runtime argument names to Triton type strings ("*bf16", "i32", `tensordesc(...)`);
    `constexprs` maps the remaining arguments to values. Raises what the compiler raises (TlxAliasError
    for a layout the plugin rejects, e.g. "shared memory over capacity").
    """
    hook.install()
    constexprs = dict(constexprs or {})
    sig = dict(signature, **{k: "constexpr" for k in constexprs})
    source, options = GluonASTSource(fn, sig, constexprs), dict(num_warps=num_warps, **options)
    t0 = time.perf_counter()
    kernel = triton.compile(source, target=target, options=options)
    return Compiled(kernel, target, time.perf_counter() - t0, source, options)


SMEM_LIMIT = targets.smem_limit(90)   # == sm_100's: the kernels here size their stages from it
TMEM_LIMIT = targets.TMEM_COLUMNS


def fit_error(compiled: Compiled) -> str | None:
    """Why a compiled kernel cannot launch, or None. triton 3.6 checks neither limit at compile time (SMEM
    fails at launch; a TMEM plan over 512 columns compiles with no tcgen05.alloc). Kernels that use the API
    get this as a compile error from the plugin; this covers variants that allocate without it."""
    if compiled.tmem_cols > TMEM_LIMIT:
        return f"does not fit: {compiled.tmem_cols} TMEM columns > {TMEM_LIMIT}"
    if compiled.smem_bytes > SMEM_LIMIT:
        return f"does not fit: {compiled.smem_bytes} bytes of SMEM > {SMEM_LIMIT}"
    return None


def proof_of(compiled: Compiled) -> str:
    """What `tlx-verify` answers on the kernel's dumped ttgir: "ok", "VIOLATION (n)" or "cannot prove (n)".

    The ttgir Triton keeps, read back through the Triton-form loader (`verify.source.load_triton`), not the
    module the compile proved: this is the offline check a user runs on a dump. A verifier that fails raises.
    """
    loaded = load_triton(compiled.ttgir, f"{compiled.kernel.name}.ttgir")
    with loaded.context:
        report = prove_module(loaded.module, f"cuda:{compiled.target.arch}", loaded.aliases, loaded.path)
    if report.violations:
        return f"VIOLATION ({len(report.violations)})"
    if report.unknowns:
        return f"cannot prove ({len(report.unknowns)})"
    return "ok"


def report_row(kernel: str, config: str, compiled: Compiled | None, error: Exception | None = None,
               target: GPUTarget = HOPPER, proof: bool = True) -> dict:
    """One `cpu_report()` row. A config that does not compile gets smem_bytes=None and the error text."""
    if compiled is None:
        return {"kernel": kernel, "config": config, "target": f"sm_{target.arch}a", "smem_bytes": None,
                "tmem_cols": None, "compile_s": None, "proof": f"compile error: {error_summary(error)}"}
    return {"kernel": kernel, "config": config, "target": compiled.target_name, "smem_bytes": compiled.smem_bytes,
            "tmem_cols": compiled.tmem_cols, "compile_s": round(compiled.compile_s, 3),
            "proof": proof_of(compiled) if proof else "skipped"}


def blackwell_row(kernel: str, config: str, build, proof: bool = True) -> dict:
    """`report_row` of `build()` (-> Compiled) for sm_100a. Variants built without the plugin can compile
    and still not fit (see `fit_error`): such a row records why instead of numbers."""
    try:
        k = build()
    except (TlxAliasError, RuntimeError, triton.CompilationError) as e:
        return report_row(kernel, config, None, e, BLACKWELL)
    error = fit_error(k)
    row = report_row(kernel, config, k, target=BLACKWELL, proof=proof and error is None)
    if error:
        row.update(smem_bytes=None, tmem_cols=None, proof=error)
    return row


def error_summary(error) -> str:
    text = str(error) if error is not None else "unknown"
    # TlxAliasError reads "file:LINE: error: [pass] problem. Fix: ..." -- keep the problem
    if "] " in text:
        text = text.split("] ", 1)[1]
    return text.split(". Fix:")[0].splitlines()[0][:120]


@gluon.jit
def online_softmax(j, qk, m_i, l_i, rows, seq_len, qk_scale, MASKED: gl.constexpr, CAUSAL: gl.constexpr,
                   BLOCK_N: gl.constexpr):
    """One K/V block of an online softmax in base 2: (P fp32 unnormalised, alpha = exp2(m_old - m_new), m, l).
    `qk` holds the raw scores of block j (rows x BLOCK_N); MASKED drops the columns past seq_len and, with
    CAUSAL, those after each row. The scale goes into the row max (one product per row, which needs
    qk_scale > 0: `softmax_scale`) and into each exp2's FMA (qk * qk_scale - m), as in FA3."""
    s = qk
    if MASKED:
        cols = j * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, qk.type.layout))
        keep = (cols < seq_len)[None, :]
        if CAUSAL:
            keep = keep & (rows[:, None] >= cols[None, :])
        s = gl.where(keep, s, -float("inf"))
    m_new = gl.maximum(m_i, gl.max(s, axis=1) * qk_scale)
    alpha = gl.exp2(m_i - m_new)
    p = gl.exp2(s * qk_scale - m_new[:, None])
    l_i = l_i * alpha + gl.sum(p, axis=1)
    return p, alpha, m_new, l_i


@gluon.jit
def tile_offsets(tile_id, num_pid_m, num_pid_n, GROUP_M: gl.constexpr, BLOCK_M: gl.constexpr,
                 BLOCK_N: gl.constexpr):
    """(off_m, off_n) of output tile `tile_id`, tiles grouped GROUP_M at a time along M for L2 reuse."""
    num_in_group = GROUP_M * num_pid_n
    first_m = (tile_id // num_in_group) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile_id % num_in_group) % group_m
    pid_n = (tile_id % num_in_group) // group_m
    return pid_m * BLOCK_M, pid_n * BLOCK_N


_GL_DTYPES = {"torch.float16": gl.float16, "torch.bfloat16": gl.bfloat16, "torch.float32": gl.float32}


def gl_dtype(torch_dtype):
    """The Gluon dtype of a torch dtype the kernels take (float16, bfloat16, float32), or None."""
    return _GL_DTYPES.get(str(torch_dtype))


def softmax_scale(sm_scale, head_dim: int, who: str) -> float:
    """The attention kernels' sm_scale (default 1 / sqrt(D)). Their softmax takes the row max of the raw scores and
    scales it once (max(x) * c = max(x * c) only for c > 0), so a scale that is not positive and finite is refused."""
    if sm_scale is None:
        return 1.0 / math.sqrt(head_dim)
    value = float(sm_scale)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{who}: sm_scale must be a positive finite number, got {sm_scale!r}")
    return value


HALF_DTYPES = ("torch.float16", "torch.bfloat16")   # the 16-bit operand dtypes the kernels take (as str)


def check_attention(q, k, v, o, lse, who: str, head_dims):
    """Operands of an attention forward: q, k, v of one (B, H, S, D) shape and 16-bit dtype, D in `head_dims`,
    CUDA and contiguous; `o` like q and `lse` a (B, H, S) float32 tensor where given. Errors name `who`."""
    import torch
    if q.ndim != 4:
        raise ValueError(f"{who}: expected q of shape (B, H, S, D), got {tuple(q.shape)}")
    if k.shape != q.shape or v.shape != q.shape:
        raise ValueError(f"{who}: q, k, v must have the same shape (B, H, S, D); got q{tuple(q.shape)}, "
                         f"k{tuple(k.shape)}, v{tuple(v.shape)} (cross-attention and GQA are not supported)")
    if str(q.dtype) not in HALF_DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        raise TypeError(f"{who}: q, k, v must all be float16 or bfloat16, got {q.dtype}, {k.dtype}, {v.dtype}")
    B, H, S, D = q.shape
    if D not in head_dims:
        raise ValueError(f"{who}: head dim must be one of {tuple(head_dims)}, got {D}")
    if S == 0 or B * H == 0:
        raise ValueError(f"{who}: empty input {tuple(q.shape)}")
    if not (q.is_cuda and k.is_cuda and v.is_cuda):
        raise ValueError(f"{who}: q, k, v must be CUDA tensors (sm_90)")
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError(f"{who}: q, k, v must be contiguous in (B, H, S, D) order; call .contiguous() first")
    if o is not None and (o.shape != q.shape or o.dtype != q.dtype or not o.is_contiguous()):
        raise ValueError(f"{who}: o must be a contiguous tensor like q")
    if lse is not None and (lse.shape != (B, H, S) or lse.dtype != torch.float32 or not lse.is_contiguous()):
        raise ValueError(f"{who}: lse must be a contiguous ({B}, {H}, {S}) float32 tensor")


def check_matmul(a, b, out, who: str):
    """A [M, K] @ B [K, N] operands of a TMA GEMM, and `out` if given: errors name `who` and what to change."""
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"{who}: expected 2-D A and B, got A{tuple(a.shape)} and B{tuple(b.shape)}")
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"{who}: inner dimensions differ: A is {M}x{K}, B is {K2}x{N}")
    if str(a.dtype) not in HALF_DTYPES or b.dtype != a.dtype:
        raise TypeError(f"{who}: A and B must both be float16 or bfloat16, got {a.dtype} and {b.dtype}")
    if not (a.is_cuda and b.is_cuda):
        raise ValueError(f"{who}: A and B must be CUDA tensors")
    if not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError(f"{who}: A and B must be contiguous (row-major); call .contiguous() first")
    if K % 8 or N % 8:
        raise ValueError(f"{who}: TMA needs 16-byte aligned rows: K ({K}) and N ({N}) must be multiples of 8")
    if min(M, N, K) == 0:
        raise ValueError(f"{who}: empty problem {M}x{N}x{K}")
    if out is not None and (out.shape != (M, N) or out.dtype != a.dtype or not out.is_contiguous()
                            or out.device != a.device):
        raise ValueError(f"{who}: out must be a contiguous {M}x{N} {a.dtype} tensor on {a.device}")
