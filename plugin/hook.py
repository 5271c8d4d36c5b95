"""The stages hook: the tlx-alias pipeline between Triton's `ttgir` and `llir` stages.

`install()` registers a stages hook (chained after any hook already set) that wraps `stages["ttgir"]`
(Gluon's `gluon_to_ttgir`, Triton's `make_ttgir`). After that stage, `run_plugin` takes a module with
tlx tags (`tlx.spec`) through the pipeline, top-down:

    Triton module --bridge.to_upstream--> upstream MLIR module --passes (lowering)--> --verify (proof)-->
    --bridge.to_triton--> Triton module (llir then assigns SMEM/TMEM offsets; `check_capacity` and the
    under-use hint, `tlx_alias.underuse.hint`, after it)

Any other module is returned as it is (same object, no round trip). While installed, Triton's compile
caches are keyed on the plugin's version and `TLX_ALIAS_*` environment (`cache_key_suffix`), so a cache
never hands back a kernel built under another plugin state. Activation by environment variable:
`plugin/activation.py`.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time

from tlx_alias import _triton, bridge, targets, underuse
from tlx_alias.errors import TlxAliasError
from tlx_alias.python_passes import pipeline
from tlx_alias.python_passes.analysis import tmem_allocation_columns
from tlx_alias.python_passes.tlx_import import FACTS_ATTR  # the module's record of specs (a string attribute)
from tlx_alias.verify import enforce
from tlx_alias.verify.encode import loc_info

ENV_PREFIX = "TLX_ALIAS_"

_TAG = re.compile(r'[{ ,]"?tlx\.specs?"? = ')   # a tagged allocation, or the module's record of specs
_lock = threading.Lock()
_active = False
last_round_trip: dict = {}
"""Figures of the latest plugin run: tags_ms (has_tags), bridge timings (ms), lower_ms, proof_ms (p7_ms of
it: the temporal proof; 0 when the proof did not run), total_ms (all of it, has_tags included), locations;
and what the under-use hint needs after `llir` (`separations`, `tmem_columns`)."""


# ------------------------------------------------------------------------------------------ pipeline

def lower(upstream_module, aliases, target=None):
    """The lowering the hook runs on `upstream_module`, in place (tests monkeypatch this attribute).
    Returns the pipeline's PassContext (its `separations` feed the under-use hint)."""
    return pipeline.lower(upstream_module, aliases, target=target, exact_views=_triton.REINTERPRET_KEEPS_SIZE,
                          row_windows=_triton.SUBSLICE_ANY_SHAPE)


def prove(upstream_module, target, aliases):
    """The Z3 safety proof of the lowered module (TLX_ALIAS_PROOF=error|warn|strict|off; tests monkeypatch)."""
    return enforce(upstream_module, target, aliases)


def check_capacity(metadata, target, src=None):
    """After Triton placed every buffer: the whole kernel must fit the SM.

    Triton 3.6 checks neither limit at compile time (SMEM fails at launch; a TMEM plan over 512 columns
    compiles with no `tcgen05.alloc` at all, a silently wrong kernel). For kernels that use the API this
    is a compile error naming the totals (and `src`, the kernel's definition line).
    """
    smem, tmem = metadata.get("shared", 0) or 0, metadata.get("tmem_size", 0) or 0
    limit = targets.smem_limit(targets.capability(target))
    if smem > limit:
        raise TlxAliasError("tlx-alias capacity", f"the kernel needs {smem} bytes of shared memory (aliased "
                            f"specs plus every other buffer and Triton's scratch), the target allows {limit}",
                            "share more buffers through a storage_alias_spec, or use fewer stages / smaller tiles",
                            src)
    if tmem > targets.TMEM_COLUMNS:
        raise TlxAliasError("tlx-alias capacity", f"the kernel needs {tmem} tensor-memory columns, the SM has "
                            f"{targets.TMEM_COLUMNS}", "share more TMEM buffers through a storage_alias_spec "
                            "(e.g. P, alpha, l, m on QK as in seed 000)", src)


def has_tags(triton_module) -> bool:
    """Does any op carry a tlx tag? The frontend's record of specs on the module (contract 1) answers at
    once; without it (tags written by hand) a string search over the printout, which costs a whole custom
    printout (16 ms for blackwell_attention) that `bridge.to_upstream` then makes again with locations."""
    if triton_module.get_operation().get_str_attr(FACTS_ATTR) is not None:
        return True
    return _TAG.search(triton_module.str_nodebug()) is not None


def _kernel_src(module):
    """"file:line" of the (first) kernel function's definition, for errors that concern the whole kernel."""
    for op in module.body.operations:
        if op.operation.name == "tt.func":
            return loc_info(op.location)[1] or None
    return None


def run_plugin(triton_module, target=None):
    """What the wrapped `ttgir` stage does after the stage itself."""
    t0 = time.perf_counter()
    if not has_tags(triton_module):
        return triton_module
    tags_ms = (time.perf_counter() - t0) * 1e3
    module, aliases = bridge.to_upstream(triton_module)
    t1 = time.perf_counter()
    try:
        ctx = lower(module, aliases, target=target)  # rewrites `module` in place
        t2 = time.perf_counter()
        report = prove(module, target, aliases)  # None when TLX_ALIAS_PROOF=off
    except TlxAliasError as err:  # the user's mistake: surface it as itself, not as a compiler crash
        raise err.with_traceback(None) from None
    t3 = time.perf_counter()
    out = bridge.to_triton(module, aliases, triton_module.context)
    last_round_trip.clear()
    last_round_trip.update(bridge.last_stats, kernel_src=_kernel_src(module), tags_ms=tags_ms,
                           lower_ms=(t2 - t1) * 1e3, proof_ms=(t3 - t2) * 1e3,
                           p7_ms=report.p7_ms if report is not None else 0.0,
                           total_ms=(time.perf_counter() - t0) * 1e3,
                           separations=list(ctx.separations), tmem_columns=tmem_allocation_columns(module, aliases))
    return out


# ------------------------------------------------------------------------------------------ install

def _make_hook(prev):
    def tlx_alias_stages_hook(*args):
        if not args:  # Triton >= 3.7 asks for the cache key of the pipeline as modified
            key, digest = prev() if prev is not None else ("", "")
            if not _active:
                return key, digest
            suffix = cache_key_suffix()
            return key + suffix, hashlib.sha256(f"{digest}{suffix}".encode()).hexdigest()
        backend, stages, options, language, capability = args
        if prev is not None:
            prev(*args)
        stage = stages.get(_triton.STAGE)
        if not _active or stage is None or getattr(stage, "_tlx_alias", False):
            return  # uninstalled, or already wrapped by another copy of this hook in the chain
        target = _triton.target_of(backend)
        lowered = {}

        def ttgir_then_tlx_alias(src, metadata):
            module = stage(src, metadata)
            out = run_plugin(module, target)
            lowered["yes"] = out is not module
            lowered["src"] = last_round_trip.get("kernel_src")
            lowered["separations"] = last_round_trip.get("separations", [])
            lowered["tmem_columns"] = last_round_trip.get("tmem_columns", [])
            return out

        ttgir_then_tlx_alias._tlx_alias = True
        stages[_triton.STAGE] = ttgir_then_tlx_alias
        llir = stages.get(_triton.CAPACITY_STAGE)
        if llir is not None:
            def llir_then_capacity(src, metadata):
                out = llir(src, metadata)
                if lowered.get("yes"):
                    check_capacity(metadata, target, lowered.get("src"))
                    underuse.hint(lowered["separations"], metadata, target, lowered["tmem_columns"])
                return out
            stages[_triton.CAPACITY_STAGE] = llir_then_capacity

    tlx_alias_stages_hook._tlx_alias = True
    tlx_alias_stages_hook._tlx_alias_prev = prev
    return tlx_alias_stages_hook


def install():
    """Register the stages hook (and, on Triton 3.6, the cache-key suffix). Idempotent and cheap."""
    global _active
    with _lock:
        current = _triton.get_stages_hook()
        if not getattr(current, "_tlx_alias", False):
            _triton.set_stages_hook(_make_hook(current))
        if not _triton.HOOK_KEYS_CACHE:
            _triton.patch_cache_key(cache_key_suffix)
        _active = True


def uninstall():
    """Undo install(): restore the previous hook (or go inert if another hook was chained on top)."""
    global _active
    with _lock:
        _active = False
        current = _triton.get_stages_hook()
        if getattr(current, "_tlx_alias", False):
            _triton.set_stages_hook(current._tlx_alias_prev)
        if not _triton.HOOK_KEYS_CACHE:
            _triton.unpatch_cache_key()


def is_installed() -> bool:
    if not _active:
        return False
    return getattr(_triton.get_stages_hook(), "_tlx_alias", False)


# ------------------------------------------------------------------------------------------ cache key

_version = None


def plugin_version() -> str:
    """Hash of the tlx_alias sources that can change a compiled kernel (frontend, plugin, passes, proof)."""
    global _version
    if _version is None:
        import tlx_alias
        root = os.path.dirname(os.path.abspath(tlx_alias.__file__))
        h = hashlib.sha256(tlx_alias.__version__.encode())
        for dirpath, dirnames, filenames in os.walk(root):
            # what can change a compiled kernel: frontend, plugin, passes, proof (not the bundled kernels)
            dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "kernels"))
            for name in sorted(filenames):
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    h.update(os.path.relpath(path, root).encode())
                    with open(path, "rb") as f:
                        h.update(f.read())
        _version = h.hexdigest()[:16]
    return _version


def cache_key_suffix() -> str:
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX))
    return f"-tlx_alias-{plugin_version()}-{env}"
