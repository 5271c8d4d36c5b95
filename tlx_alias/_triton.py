"""Everything that depends on the Triton release (3.6.0 to 3.9.x) lives here; nothing else touches internals.

Compiler side:
- the stages hook knob (`knobs.runtime.add_stages_inspection_hook`) and the stage the plugin wraps (`ttgir`).
  From 3.7 Triton also calls the hook with no arguments and keys its disk and in-process caches on the
  `(key, hash)` it returns; 3.6 does not, so there the compile-cache key function is patched instead;
- the generic printout: Triton's Python API prints modules only in custom assembly (`module.str()`, with
  locations). MLIR prints a module that fails verification in generic form, so `print_generic` adds an
  empty second block to the module region for the moment of printing (a `builtin.module` may have only
  one) and erases it. No Triton release offers generic form otherwise (checked 3.6-3.9);
- parsing text back: `ir.parse_mlir_module(path, context)` (a path only), from an anonymous in-memory
  file (Linux), else a private temporary file that is removed at once;
- what the lowering may emit: an SMEM backing allocation is `[G, P] x i8` with a rank-1 shared layout, so
  dim 0 is a pipelining dimension any size may take and P is a power of two (3.8 aborts, 3.9 rejects other
  non-power-of-two shapes); `memdesc_reinterpret` keeps the exact size on 3.8 (REINTERPRET_KEEPS_SIZE); a
  `memdesc_subslice` of rows of that backing verifies on 3.9 only (3.6-3.8 abort unless G is a power of two:
  SUBSLICE_ANY_SHAPE), which is also the release whose Membar and TMEM passes need it (exact per-slot
  footprints): the lowering's row windows (SMEM) and column windows (TMEM, a `ttng.tmem_subslice` with 3.9's
  `offset`) are on where it is.

Gluon side (the frontend and kernels call these instead of the renamed builtins): `barrier`, `tma_load`,
`tma_store`, `tmem_reg_layout`, `reinterpret`, `tmem_layout`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import os
import re
import sys
import tempfile

import triton
from triton import knobs
from triton._C.libtriton import ir

from tlx_alias.textin import FD_DIR, PARSE_FILE_PREFIX

VERSION = tuple(int(x) for x in re.match(r"(\d+)\.(\d+)\.(\d+)", triton.__version__).groups())
SUPPORTED = ((3, 6), (3, 9))          # first and last supported minor release
if not SUPPORTED[0] <= VERSION[:2] <= SUPPORTED[1]:
    raise ImportError(f"tlx-alias supports triton 3.6 to 3.9; found triton {triton.__version__}. "
                      "Install a supported release: pip install 'triton>=3.6,<3.10'")

HOOK_KEYS_CACHE = VERSION >= (3, 7, 0)          # the hook answers `()` with the cache key of its pipeline
REINTERPRET_KEEPS_SIZE = VERSION[:2] == (3, 8)   # memdesc_reinterpret must keep the allocation's byte size
SUBSLICE_ANY_SHAPE = VERSION >= (3, 9, 0)        # memdesc_subslice of a [G, P] backing verifies for any G

STAGE = "ttgir"            # the plugin runs right after this stage (before `llir` assigns offsets)
CAPACITY_STAGE = "llir"    # after it, metadata has "shared" and "tmem_size" (every buffer placed)
_EXTRA_BLOCK = "\n^bb1:  // no predecessors\n"



@contextlib.contextmanager
def captured_stderr():
    """Redirect fd 2 (C++ diagnostics) into an anonymous file for the block; yields a callable returning it."""
    with tempfile.TemporaryFile(mode="w+b") as sink:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield lambda: (sink.seek(0), sink.read().decode("utf-8", "replace"))[1]
        finally:
            os.dup2(saved, 2)
            os.close(saved)


# ---------------------------------------------------------------------------- the stages hook knob

def get_stages_hook():
    return knobs.runtime.add_stages_inspection_hook


def set_stages_hook(fn):
    knobs.runtime.add_stages_inspection_hook = fn


def stages_hook(fn, key: str):
    """A stages hook from `fn(backend, stages, options, language, capability)` that also answers Triton
    >= 3.7's no-argument call with `(key, hash)`, so compiles with and without it are cached apart."""

    def hook(*args):
        if not args:
            return key, hashlib.sha256(key.encode()).hexdigest()
        return fn(*args)
    return hook


def target_of(backend) -> str:
    """"cuda:90", "cuda:100", "hip:gfx942" — the same spelling as the module's `ttg.target`."""
    return f"{backend.target.backend}:{backend.target.arch}"


# ---------------------------------------------------------------------------- the cache key (3.6)

_KEY_HOLDERS = ("triton.compiler.compiler", "triton.runtime.jit")


def patch_cache_key(suffix_fn):
    """3.6 only: make `get_cache_key(...)` return the original key + `suffix_fn()` wherever Triton calls it.

    Idempotent; `unpatch_cache_key()` restores the original functions. (3.6's in-process JIT cache does
    not go through it: there the plugin is switched per process.)
    """
    for name in _KEY_HOLDERS:
        mod = importlib.import_module(name)
        current = mod.get_cache_key
        orig = getattr(current, "__tlx_alias_orig__", current)

        def get_cache_key(*args, __orig=orig, **kwargs):
            return __orig(*args, **kwargs) + suffix_fn()

        get_cache_key.__tlx_alias_orig__ = orig
        mod.get_cache_key = get_cache_key


def unpatch_cache_key():
    for name in _KEY_HOLDERS:
        mod = importlib.import_module(name)
        mod.get_cache_key = getattr(mod.get_cache_key, "__tlx_alias_orig__", mod.get_cache_key)


# ---------------------------------------------------------------------------- generic printout / parse

def print_generic(module) -> str:
    """The whole module in generic form, with its locations and the alias definitions on top.

    Triton's Python API prints custom assembly only (`module.str()`, debug info on). MLIR's printer prints
    an op that fails verification in generic form instead (custom printers may assume a valid op), so an
    empty second block is added to the module region (a `builtin.module` has one) while `str()` prints, and
    erased after: the module is unchanged, nothing runs over it, nothing is written anywhere, and the
    verifier's complaint goes to a handler the printer scopes to this thread (checked on 3.6-3.9).
    """
    block = ir.builder(module.context).create_block_with_parent(module.get_region(0), [])
    try:
        text = module.str()
    finally:
        block.erase()
    at = text.rfind(_EXTRA_BLOCK)
    if at < 0 or not text.lstrip().startswith(("#", "!", '"builtin.module"')):
        raise RuntimeError("tlx-alias: Triton did not print the module in generic form "
                           f"(triton {triton.__version__}); first line: {text[:200]!r}")
    return text[:at + 1] + text[at + len(_EXTRA_BLOCK):]


@contextlib.contextmanager
def _text_at_a_path(text: str):
    """A path Triton's parser can read `text` from: an anonymous in-memory file (Linux `memfd_create`, read
    through /proc/self/fd: nothing is created in a directory, 0.2 ms less per parse than a file in /tmp on
    this machine's disk), else a private temporary file, removed at once."""
    try:
        fd = os.memfd_create(PARSE_FILE_PREFIX, os.MFD_CLOEXEC) if os.path.isdir(FD_DIR) else None
    except (AttributeError, OSError):   # not Linux, or a sandbox without memfd
        fd = None
    if fd is not None:
        try:
            with os.fdopen(fd, "w", encoding="utf-8", closefd=False) as f:
                f.write(text)
            yield f"{FD_DIR}/{fd}"
        finally:
            os.close(fd)
        return
    fd, path = tempfile.mkstemp(prefix=PARSE_FILE_PREFIX, suffix=".mlir")   # only this process may write it
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def parse(text: str, context, name: str = "<lowered module>", borrow_stderr: bool = True):
    """Parse MLIR text into a Triton module in `context`; returns (module or None, diagnostics text).

    Triton parses only from a path (`_text_at_a_path`). Diagnostics call the text `name` instead of that
    path (tlx-verify passes the user's file). `borrow_stderr=False` (the plugin's lowered module) parses with
    file descriptor 2 left alone and borrows it only to read the diagnostics of a parse that failed: a layout
    Triton aborts the process on (an NVMMA tile with fewer rows than its swizzle) then still prints its
    message, which a borrowed fd 2 swallowed with the process (it died with no output).
    """
    with _text_at_a_path(text) as path:
        if not borrow_stderr:
            try:
                return _parse_at(path, context), ""
            except Exception:   # parsed again below, with fd 2 borrowed, for the diagnostics
                pass
        with captured_stderr() as err:
            try:
                return _parse_at(path, context), ""
            except Exception as exc:  # Triton raises RuntimeError("Parse MLIR file failed...")
                return None, f"{exc}\n{err()}".replace(path, name)


def _parse_at(path: str, context):
    module = ir.parse_mlir_module(path, context)
    module.context = context  # as triton.compiler.compiler.parse does; later stages read it
    return module


def new_context():
    """A Triton MLIR context with every dialect Triton's NVIDIA backend parses (for `tlx-verify`)."""
    from triton._C.libtriton import nvidia
    ctx = ir.context()
    ir.load_dialects(ctx)
    nvidia.load_dialects(ctx)
    return ctx


# ---------------------------------------------------------------------------- Gluon, renamed builtins

from triton.experimental import gluon as _gluon  # noqa: E402
from triton.experimental.gluon import language as _gl  # noqa: E402
from triton.experimental.gluon.language._core import builtin as _builtin  # noqa: E402
from triton.experimental.gluon.language.nvidia import blackwell as _bw  # noqa: E402
from triton.experimental.gluon.language.nvidia.hopper import tma as _tma  # noqa: E402

barrier = getattr(_gl, "barrier", None) or _gl.thread_barrier                         # 3.7: renamed
tma_load = getattr(_tma, "async_load", None) or _tma.async_copy_global_to_shared       # 3.8: renamed
tma_store = getattr(_tma, "async_store", None) or _tma.async_copy_shared_to_global     # 3.8: renamed


def _tmem_reg_layout(element_ty, shape, layout, num_warps):
    """The register layout of TMEM loads/stores of a `shape` tile (3.8 moved it onto the descriptor type)."""
    unwrap = _gl._core._unwrap_if_constexpr
    element_ty, layout, num_warps = unwrap(element_ty), unwrap(layout), unwrap(num_warps)
    shape = [unwrap(s) for s in unwrap(shape)]
    ty = _bw.tensor_memory_descriptor_type(element_ty, shape, layout, shape)
    return type(ty).__dict__["get_reg_layout"].fn(ty, num_warps)


# 3.6/3.7: the builtin itself (its dependency scan rejects a wrapper that calls it), same signature.
tmem_reg_layout = getattr(_bw, "get_tmem_reg_layout", None) or _gluon.constexpr_function(_tmem_reg_layout)


def trace_capability(semantic):
    """The capability (90, 100 ...) a kernel being traced is compiled for (`options.arch`, "sm90"), or None."""
    arch = getattr(getattr(semantic.builder, "options", None), "arch", None)
    m = re.fullmatch(r"sm_?(\d+)a?", str(arch or ""))
    return int(m.group(1)) if m else None


def trace_options(semantic):
    """The options object of the compile tracing the kernel (what Triton handed the stages hook), or None."""
    return getattr(semantic.builder, "options", None)


def trace_num_ctas(semantic) -> int:
    """The CTAs per cluster a kernel being traced is compiled for (`options.num_ctas`; 1 where not said)."""
    return int(getattr(getattr(semantic.builder, "options", None), "num_ctas", 1) or 1)


@_builtin
def reinterpret(desc, dtype, shape, layout, _semantic=None, _generator=None):
    """`desc` viewed as `shape` of `dtype` with `layout` (3.9 renamed `_reinterpret` to `reinterpret`)."""
    method = getattr(desc, "reinterpret", None) or desc._reinterpret
    # an aliased descriptor's method takes the caller (to name the kernel line in its error)
    extra = {"_generator": _generator} if "_generator" in inspect.signature(method).parameters else {}
    return method(dtype, shape, layout, _semantic=_semantic, **extra)


def tmem_layout(block, col_stride=1, two_ctas=False, cta_split=(1, 1)):
    """A TensorMemoryLayout split across a CTA pair by `cta_split` (M, N): `cta_split_num` on 3.6/3.7,
    `cga_layout` bases on 3.8+ ([1, 0] splits M, [0, 1] splits N)."""
    block, cta_split = tuple(block), tuple(cta_split)
    if VERSION < (3, 8, 0):
        return _bw.TensorMemoryLayout(block, col_stride=col_stride, two_ctas=two_ctas,
                                      cta_split_num=cta_split if cta_split != (1, 1) else None)
    bases = [[1, 0]] * (cta_split[0] // 2) + [[0, 1]] * (cta_split[1] // 2)
    return _bw.TensorMemoryLayout(block, col_stride=col_stride, two_ctas=two_ctas, cga_layout=bases)
