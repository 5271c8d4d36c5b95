"""The stages hook: the tlx-alias pipeline between Triton's `ttgir` and `llir` stages.

`install()` registers a stages hook (chained after any hook already set) that wraps `stages["ttgir"]`
(Gluon's `gluon_to_ttgir`, Triton's `make_ttgir`) and every later stage. After `ttgir`, `start_plugin`
takes a module with tlx tags (`tlx.spec`) through the pipeline, top-down:

    Triton module --bridge.to_upstream--> upstream MLIR module --passes (lowering)--> --bridge.to_triton-->
    Triton module (llir then assigns SMEM/TMEM offsets; `check_capacity` and the under-use hint,
    `tlx_alias.underuse.hint`, after it)
    lowered upstream module --verify (proof), on a thread of its own (`PendingProof`)--> verdicts

The proof runs while Triton's later stages, which release the GIL, generate code; the hook waits for it and
judges it at the end of the last stage, and at the first error of a stage in between (the proof's verdict
outranks that error), so no kernel is handed back before its proof is judged; if another hook has replaced the
last stage, or the process has one core, at `ttgir` itself. `run_plugin` (tests, tools) proves before it
returns. Any other module is returned as it is (same object, no round trip). While installed, Triton's compile
caches are keyed on the plugin's version and `TLX_ALIAS_*` environment (`cache_key_suffix`), so a cache never
hands back a kernel built under another plugin state. Activation by environment variable:
`plugin/activation.py`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import re
import threading
import time
import weakref

from tlx_alias import _triton, bridge, targets, underuse
from tlx_alias.errors import TlxAliasError, warn_at
from tlx_alias.memdesc import UnsizedType
from tlx_alias.python_passes import pipeline
from tlx_alias.python_passes.analysis import tmem_allocation_columns
from tlx_alias.python_passes.tlx_import import FACTS_ATTR, spec_record  # the module's record of specs
from tlx_alias.verify import judge, mode_from_env, prove_module
from tlx_alias.verify.encode import loc_info
from tlx_alias.verify.temporal import mixed_enabled, step_budget
from tlx_alias.verify.wellformed import MalformedIR

ENV_PREFIX = "TLX_ALIAS_"

_TAG = re.compile(r'[{ ,]"?tlx\.specs?"? = ')   # a tagged allocation, or the module's record of specs
_LOWERED = re.compile(r'[{ ,]"?tlx\.backing"? = ')   # a spec's backing allocation: the lowering ran
_lock = threading.Lock()
_active = False
_hooked: dict = {}   # id(options) -> weakref of the options of each compile whose stages the hook wrapped
_unlowered = 0       # > 0 inside `unlowered()`
last_round_trip: dict = {}
"""Figures of the latest plugin run: tags_ms (has_tags), bridge timings (ms), lower_ms, proof_ms (the
proof's CPU time on its thread and the making of its Z3 context on another; p7_ms of it: the temporal proof;
both 0 when the proof did not run),
wait_ms (how long the compile waited for the proof at its join), work_ms (all the plugin's own time, the
proof's included), total_ms (the plugin's time on the compile's path: work_ms less what the proof spent
while Triton generated code), locations; and what the under-use hint needs after `llir` (`separations`,
`tmem_columns`). The proof's figures are there once it has been waited for."""


# ------------------------------------------------------------------------------------------ pipeline

def lower(upstream_module, aliases, target=None):
    """The lowering the hook runs on `upstream_module`, in place (tests monkeypatch this attribute).
    Returns the pipeline's PassContext (its `separations` feed the under-use hint)."""
    return pipeline.lower(upstream_module, aliases, target=target, exact_views=_triton.REINTERPRET_KEEPS_SIZE,
                          row_windows=_triton.SUBSLICE_ANY_SHAPE)


def prove(upstream_module, target, aliases):
    """The Z3 safety proof of the lowered module, a Report (judged by `PendingProof.wait`; tests monkeypatch)."""
    return prove_module(upstream_module, target, aliases)


class PendingProof:
    """The proof of one lowered module on a thread of its own (TLX_ALIAS_PROOF=error|warn|strict; `off`: none).

    Triton's stages after `ttgir` (llir, ptx, ptxas) run outside the GIL, so with a second core the proof
    costs the compile only what is left of it when code generation ends. Its work is the same: on a machine
    whose cores are all compiling it costs its whole time. `wait()` joins, records the timings in `stats`
    and judges the report (`verify.judge`: raises what stops the compile, warns of the rest) on the caller's
    thread; an exception of the proof itself is raised there as it is."""

    def __init__(self, module, target, aliases, stats: dict):
        self.stats, self._report, self._error, self._ms = stats, None, None, 0.0
        self._mode = mode_from_env()   # a misspelt mode or P7 knob fails the compile here, before any thread
        self._thread = None
        if self._mode != "off":
            step_budget(), mixed_enabled()
            self._thread = threading.Thread(target=self._run, args=(module, target, aliases),
                                            name="tlx-alias-proof")
            self._thread.start()

    def _run(self, module, target, aliases):
        t0 = time.thread_time()   # CPU time: its wall time on a shared core would count Triton's work too
        try:
            self._report = prove(module, target, aliases)
        except BaseException as err:   # noqa: B036 -- handed to the waiting thread, raised there
            self._error = err
        # (and the CPU time another thread spent making its Z3 context ahead of it: work of the proof too)
        self._ms = (time.thread_time() - t0) * 1e3 + (self._report.context_ms if self._report is not None else 0.0)

    def discard(self):
        """Wait for the thread and drop its verdict (the module it proves is no longer compiled)."""
        if self._thread is not None:
            self._thread.join()
            self._thread, self._report, self._error = None, None, None

    def wait(self):
        if self._thread is None:
            return None
        t0 = time.perf_counter()
        self._thread.join()
        self._thread = None
        wait_ms = (time.perf_counter() - t0) * 1e3
        report = self._report
        self.stats.update(proof_ms=self._ms, p7_ms=report.p7_ms if report is not None else 0.0, wait_ms=wait_ms,
                          work_ms=self.stats["work_ms"] + self._ms, total_ms=self.stats["total_ms"] + wait_ms)
        last_round_trip.clear()
        last_round_trip.update(self.stats)
        if self._error is not None:
            err, self._error = self._error, None
            if isinstance(err, TlxAliasError):   # the user's mistake: as itself, not as a compiler crash
                raise err.with_traceback(None) from None
            if isinstance(err, MalformedIR) and err.unsupported:   # memory the proof cannot size: no verdict
                src = loc_info(err.op.location)[1] if err.op is not None else None
                raise TlxAliasError("tlx-verify", f"cannot prove anything of this kernel: {err.problem}",
                                    f"{UnsizedType.FIX}, or set TLX_ALIAS_PROOF=off to compile without the proof",
                                    src or None) from None
            raise err
        try:
            return judge(report, self._mode)
        except TlxAliasError as err:
            raise err.with_traceback(None) from None


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
    once; without it (tags written by hand) a string search over the custom printout (16 ms for
    blackwell_attention), made only for kernels that carry no such record."""
    if triton_module.get_operation().get_str_attr(FACTS_ATTR) is not None:
        return True
    return _TAG.search(triton_module.str_nodebug()) is not None


def _kernel_src(module):
    """"file:line" of the (first) kernel function's definition, for errors that concern the whole kernel; where
    the IR has no locations (TRITON_DISABLE_LINE_INFO=1), the first spec's line from the frontend's record."""
    for op in module.body.operations:
        if op.operation.name == "tt.func" and loc_info(op.location)[1]:
            return loc_info(op.location)[1]
    return next((spec.get("src") for spec in spec_record(module).values() if spec.get("src")), None)


def run_plugin(triton_module, target=None):
    """What the wrapped `ttgir` stage does after the stage itself, the proof judged before it returns."""
    out, pending = start_plugin(triton_module, target)
    if pending is not None:
        pending.wait()
    return out


def start_plugin(triton_module, target=None, lowered_already=False):
    """(module for Triton, PendingProof or None): the pipeline with the proof still running. lowered_already: the
    module (an override file) is proven as it is."""
    t0 = time.perf_counter()
    if lowered_already:
        module, aliases = bridge.to_upstream(triton_module)
        ms = (time.perf_counter() - t0) * 1e3
        stats = dict(bridge.last_stats, kernel_src=_kernel_src(module), separations=[], tmem_columns=[],
                     work_ms=ms, total_ms=ms)
        return triton_module, PendingProof(module, target, aliases, stats)
    if not has_tags(triton_module):
        return triton_module, None
    tags_ms = (time.perf_counter() - t0) * 1e3
    module, aliases = bridge.to_upstream(triton_module)
    t1 = time.perf_counter()
    try:
        ctx = lower(module, aliases, target=target)  # rewrites `module` in place
    except TlxAliasError as err:  # the user's mistake: surface it as itself, not as a compiler crash
        raise err.with_traceback(None) from None
    t2 = time.perf_counter()
    out = bridge.to_triton(module, aliases, triton_module.context)
    tmem_hint = any(sep.storage == "tmem" for sep in ctx.separations)   # else the hint needs no TMEM count
    stats = dict(bridge.last_stats, kernel_src=_kernel_src(module), tags_ms=tags_ms, lower_ms=(t2 - t1) * 1e3,
                 proof_ms=0.0, p7_ms=0.0, wait_ms=0.0, separations=list(ctx.separations),
                 tmem_columns=tmem_allocation_columns(module, aliases) if tmem_hint else [])
    stats["work_ms"] = stats["total_ms"] = (time.perf_counter() - t0) * 1e3
    last_round_trip.clear()
    last_round_trip.update(stats)
    return out, PendingProof(module, target, aliases, stats)   # after to_triton: the module is the proof's


# ------------------------------------------------------------------------------------------ install

def _spare_core() -> bool:
    """Can this process run on more than one core (its affinity, else the machine's count)?"""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:   # no sched_getaffinity (macOS, Windows)
        return (os.cpu_count() or 1) > 1


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
        if _active:
            _hooked[id(options)] = weakref.ref(options, lambda _, key=id(options): _hooked.pop(key, None))
        stage = stages.get(_triton.STAGE)
        if not _active or stage is None or getattr(stage, "_tlx_alias", False):
            return  # uninstalled, or already wrapped by another copy of this hook in the chain
        target = _triton.target_of(backend)
        lowered = {}
        keys = list(stages)
        later = keys[keys.index(_triton.STAGE) + 1:]

        def join():
            """Wait for this compile's proof: it outranks any error of the stages it overlapped."""
            pending = lowered.pop("proof", None)
            if pending is not None:
                pending.wait()

        def ttgir_then_tlx_alias(src, metadata):
            module = stage(src, metadata)
            out, lowered["proof"] = start_plugin(module, target)
            lowered["yes"], lowered["out"] = out is not module, out
            stats = lowered["proof"].stats if lowered["proof"] is not None else {}   # this compile's, not the
            lowered["src"] = stats.get("kernel_src")                                  # latest of the process
            lowered["separations"] = stats.get("separations", [])
            lowered["tmem_columns"] = stats.get("tmem_columns", [])
            # Triton runs the stages as they are now: overlap only if the last of them is still ours, and only
            # with a core to spare (on one core the proof's thread and Triton's stages take turns: slower)
            if lowered["proof"] is not None and (not later or stages[later[-1]] is not mine[later[-1]]
                                                 or not _spare_core()):
                join()
            return out

        def overridden(ext, module):
            """The stage `ext`'s output was replaced (TRITON_KERNEL_OVERRIDE, the `ir_override` option): a ttgir
            is lowered and proven in place of the one the proof covered; a later stage's is beyond the proof."""
            if ext != _triton.STAGE:
                if lowered.get("yes"):
                    join()
                    warn_at(lowered.get("src"), f"[tlx-alias] this kernel's {ext} was replaced by an override file: "
                            f"the proof covers the ttgir tlx-alias lowered, not the override")
                return module
            if not lowered.get("yes") and not has_tags(module):
                return module     # a kernel that does not use the API: Triton's business alone
            pending = lowered.pop("proof", None)
            if pending is not None:
                pending.discard()   # the proof of a module that is no longer compiled
            done = not has_tags(module) or _LOWERED.search(module.str_nodebug()) is not None
            out, lowered["proof"] = start_plugin(module, target, lowered_already=done)
            lowered["yes"] = True
            join()
            return out

        def then_join(name, run):
            def stage_then_join(src, metadata):
                try:
                    if "out" in lowered and src is not lowered["out"]:   # Triton took the previous stage's
                        src = overridden(keys[keys.index(name) - 1], src)   # output from a file
                    elif "out" not in lowered and name == later[0] and has_tags(src):
                        raise TlxAliasError("tlx-alias", "the kernel reached Triton's llir stage without its "
                                            "lowering: another stages hook replaced the ttgir stage tlx-alias wraps",
                                            "make that hook wrap the ttgir stage it finds (call it) instead of "
                                            "replacing it")
                    out = lowered["out"] = run(src, metadata)
                    if name == _triton.CAPACITY_STAGE and lowered.get("yes"):
                        check_capacity(metadata, target, lowered.get("src"))
                        underuse.hint(lowered["separations"], metadata, target, lowered["tmem_columns"])
                except Exception:   # (an interrupt goes on as it is: the proof's thread ends by itself)
                    join()
                    raise
                if name == later[-1]:
                    join()
                return out
            stage_then_join._tlx_alias = True
            return stage_then_join

        ttgir_then_tlx_alias._tlx_alias = True
        stages[_triton.STAGE] = ttgir_then_tlx_alias
        mine = {name: then_join(name, stages[name]) for name in later}
        stages.update(mine)

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


def lowers(options) -> bool:
    """Will the compile whose options these are run the lowering? Triton calls the stages hook with the options
    object it then traces the kernel with; a hook set later that does not call the previous one (or
    `knobs.runtime.scope()` ending) takes tlx-alias out of the pipeline, and the frontend refuses then."""
    ref = _hooked.get(id(options))
    return _unlowered > 0 or (ref is not None and ref() is options)


@contextlib.contextmanager
def unlowered():
    """Compiles in this block may use the API without the lowering: the tagged allocations compile as plain ones,
    unshared and unproven. For what inspects or measures the frontend alone (its tests; the unshared baseline of
    `benchmarks/compile_overhead.py`), never for a kernel that runs."""
    global _unlowered
    _unlowered += 1
    try:
        yield
    finally:
        _unlowered -= 1


def stages_hook_name() -> str:
    fn = _triton.get_stages_hook()
    return "None" if fn is None else f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"


def is_installed() -> bool:
    if not _active:
        return False
    return getattr(_triton.get_stages_hook(), "_tlx_alias", False)


# ------------------------------------------------------------------------------------------ cache key

_version = None
KEYED_PACKAGES = ("tlx_alias", "tlx_alias.plugin", "tlx_alias.python_passes", "tlx_alias.verify")
"""The packages whose sources can change a compiled kernel: frontend and bridge, plugin, passes, proof (not the
bundled kernels, nor test tooling and benchmarks, which live outside the package)."""


def keyed_sources() -> list:
    """(module name, path) of every source file of KEYED_PACKAGES, found through each package's own folder:
    installed, the subpackages are folders of `tlx_alias`; in the source tree they are folders beside it."""
    out = []
    for package in KEYED_PACKAGES:
        folder = os.path.dirname(os.path.abspath(importlib.import_module(package).__file__))
        out += [(f"{package}.{name[:-3]}", os.path.join(folder, name))
                for name in sorted(os.listdir(folder)) if name.endswith(".py")]
    return out


def plugin_version() -> str:
    """Hash of `keyed_sources()` and the package version: part of every cache key of a kernel the plugin compiles."""
    global _version
    if _version is None:
        h = hashlib.sha256(importlib.import_module("tlx_alias").__version__.encode())
        for module, path in keyed_sources():
            h.update(module.encode())
            with open(path, "rb") as f:
                h.update(f.read())
        _version = h.hexdigest()[:16]
    return _version


def cache_key_suffix() -> str:
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX))
    return f"-tlx_alias-{plugin_version()}-{env}"
