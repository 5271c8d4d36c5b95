"""Everything that depends on Triton's version (3.6.0) lives here, and nothing else imports triton internals.

- the stages hook knob (`knobs.runtime.add_stages_inspection_hook`) and the stage the plugin wraps (`ttgir`);
- the compile-cache key patch point (`get_cache_key` as imported into `triton.compiler.compiler` and
  `triton.runtime.jit`);
- the generic printout: Triton's Python API prints modules only in custom assembly. Its pass manager writes
  a "reproducer" file when `TRITON_REPRODUCER_PATH` is set (`pass_manager.run(mod, tag)` writes
  `<path>.<tag>.repro.mlir` before running). MLIR prints a module that fails verification in generic form,
  so we add an empty second block to the module region for the moment (a `builtin.module` may have only
  one), run an EMPTY pass manager, read the file and erase the block. Nothing runs over the module, so it
  is left exactly as it was; no diagnostics are printed. Measured: ~0.2 ms for a small kernel, large
  constants are printed in full (`dense<"0x...">`), no locations.
- parsing text back: `ir.parse_mlir_module(path, context)` keeps the `loc(...)` it finds.

Importing this module imports triton.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading

import triton

SUPPORTED = "3.6.0"
VERSION = triton.__version__
if VERSION.split("+")[0] != SUPPORTED:  # a different Triton may rename any of the internals below
    import warnings
    from tlx_alias.errors import TlxAliasWarning
    warnings.warn(TlxAliasWarning(f"tlx-alias is written against triton {SUPPORTED}; found {VERSION}"),
                  stacklevel=2)

from triton import knobs  # noqa: E402
from triton._C.libtriton import ir  # noqa: E402

STAGE = "ttgir"            # the plugin runs right after this stage (before `llir` assigns offsets)
CAPACITY_STAGE = "llir"    # after it, metadata has "shared" and "tmem_size" (every buffer placed)
# Ops that Triton's custom printers leave out (implicit terminators, the op holding warp_specialize's
# partition regions): only the generic form lists them.
CUSTOM_FORM_HIDDEN_OPS = frozenset({"scf.yield", "ttg.warp_specialize.partitions", "ttg.warp_yield",
                                    "ttg.warp_return"})
_REPRO_ENV = "TRITON_REPRODUCER_PATH"
_EXTRA_BLOCK = "\n^bb1:  // no predecessors\n"

_lock = threading.RLock()
_tmpdir = None


def tmpdir() -> str:
    """A private directory for this process's bridge files (removed at exit)."""
    global _tmpdir
    if _tmpdir is None:
        import atexit
        import shutil
        _tmpdir = tempfile.mkdtemp(prefix="tlx-alias-")
        atexit.register(shutil.rmtree, _tmpdir, True)
    return _tmpdir


@contextlib.contextmanager
def captured_stderr():
    """Redirect fd 2 (C++ diagnostics) into a file for the block; yields a callable returning the text."""
    import sys
    with tempfile.TemporaryFile(mode="w+b", dir=tmpdir()) as sink:
        try:
            sys.stderr.flush()
        except Exception:
            pass
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


def target_of(backend) -> str:
    """"cuda:90", "cuda:100", "hip:gfx942" — the same spelling as the module's `ttg.target`."""
    return f"{backend.target.backend}:{backend.target.arch}"


# ---------------------------------------------------------------------------- the cache key

_KEY_HOLDERS = ("triton.compiler.compiler", "triton.runtime.jit")


def patch_cache_key(suffix_fn):
    """Make `get_cache_key(...)` return the original key + `suffix_fn()` wherever Triton calls it.

    Idempotent; `unpatch_cache_key()` restores the original functions.
    """
    import importlib
    for name in _KEY_HOLDERS:
        mod = importlib.import_module(name)
        current = mod.get_cache_key
        orig = getattr(current, "__tlx_alias_orig__", current)

        def get_cache_key(*args, __orig=orig, **kwargs):
            return __orig(*args, **kwargs) + suffix_fn()

        get_cache_key.__tlx_alias_orig__ = orig
        mod.get_cache_key = get_cache_key


def unpatch_cache_key():
    import importlib
    for name in _KEY_HOLDERS:
        mod = importlib.import_module(name)
        mod.get_cache_key = getattr(mod.get_cache_key, "__tlx_alias_orig__", mod.get_cache_key)


def cache_key_is_patched() -> bool:
    import triton.compiler.compiler as cc
    return hasattr(cc.get_cache_key, "__tlx_alias_orig__")


# ---------------------------------------------------------------------------- generic printout / parse

_counter = 0


def print_generic(module) -> str:
    """The whole module in generic form, alias definitions on top, no locations.

    The module is unchanged afterwards (the temporary block is erased; no pass runs).
    """
    global _counter
    with _lock:
        _counter += 1
        tag = f"p{os.getpid()}_{_counter}"
        base = os.path.join(tmpdir(), "repro")
        path = f"{base}.{tag}.repro.mlir"
        saved = os.environ.get(_REPRO_ENV)
        block = ir.builder(module.context).create_block_with_parent(module.get_region(0), [])
        try:
            os.environ[_REPRO_ENV] = base
            with captured_stderr():
                ir.pass_manager(module.context).run(module, tag)
        finally:
            block.erase()
            if saved is None:
                os.environ.pop(_REPRO_ENV, None)
            else:
                os.environ[_REPRO_ENV] = saved
        try:
            with open(path) as f:
                text = f.read()
        finally:
            with contextlib.suppress(OSError):
                os.remove(path)
    # Drop the temporary block (the module region's last block, at column 0) and the pipeline description.
    at = text.rfind(_EXTRA_BLOCK)
    if at < 0 or not text.lstrip().startswith(("#", "!", '"builtin.module"')):
        raise RuntimeError("tlx-alias: Triton's reproducer did not print the module in generic form "
                           f"(triton {VERSION}); first line: {text[:200]!r}")
    text = text[:at + 1] + text[at + len(_EXTRA_BLOCK):]
    cut = text.find("\n{-#\n  external_resources: {\n    mlir_reproducer:")
    if cut >= 0:
        text = text[:cut + 1]
    return text


def parse(path: str, context):
    """Parse an MLIR file into a Triton module in `context`; returns (module or None, stderr text)."""
    with captured_stderr() as err:
        try:
            module = ir.parse_mlir_module(path, context)
            module.context = context  # as triton.compiler.compiler.parse does; later stages read it
            return module, ""
        except Exception as exc:  # Triton raises RuntimeError("Parse MLIR file failed...")
            return None, f"{exc}\n{err()}"
