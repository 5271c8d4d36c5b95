"""The plugin hook: passthrough, tagged kernels, chaining, idempotence, errors, cache key, activation.

`hook.lower` (the pipeline call) is monkeypatched with stubs here: these tests are about the hook, not
the passes.
"""

import os
from pathlib import Path
import subprocess
import sys
import textwrap
import threading

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language._core import builtin

from tlx_alias import _triton
from tlx_alias.errors import TlxAliasError, TlxAliasWarning
from tlx_alias.plugin import activation, hook
from tlx_alias.python_passes._ir import PassContext
from tlx_alias.verify.props import UNKNOWN, Verdict
from tlx_alias.verify.report import Report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PTH = os.path.join(ROOT, "plugin", "tlx_alias.pth")


@builtin
def _tag(desc, _semantic=None):
    """What the frontend does, in miniature: a discardable tlx attribute on the allocation."""
    desc.handle.set_attr("tlx.spec", _semantic.builder.get_string_attr("spec0"))
    return desc


@gluon.jit
def k_plain(x_ptr):
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    smem = gl.allocate_shared_memory(gl.float32, [2, 32, 32], layout)
    blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    v = smem.index(1).load(blocked)
    offs = gl.arange(0, 32, layout=gl.SliceLayout(1, blocked))
    gl.store(x_ptr + offs, gl.sum(v, axis=1))


@gluon.jit
def k_tagged(x_ptr):
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    smem = _tag(gl.allocate_shared_memory(gl.float32, [2, 32, 32], layout))
    blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    v = smem.index(1).load(blocked)
    offs = gl.arange(0, 32, layout=gl.SliceLayout(1, blocked))
    gl.store(x_ptr + offs, gl.sum(v, axis=1))


def compile_(fn, cc=90):
    return triton.compile(GluonASTSource(fn, {"x_ptr": "*fp32"}, {}), target=GPUTarget("cuda", cc, 32))


@pytest.fixture(autouse=True)
def _clean_state(tmp_path, monkeypatch):
    was_installed = hook.is_installed()
    hook.uninstall()
    saved = _triton.get_stages_hook()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    for key in [k for k in os.environ if k.startswith("TLX_ALIAS_")]:
        monkeypatch.delenv(key)
    yield
    hook.uninstall()
    _triton.set_stages_hook(saved)
    if was_installed:
        hook.install()


@pytest.fixture
def calls(monkeypatch):
    """Replace the pipeline with an identity stub that records its arguments."""
    seen = []

    def stub(module, aliases, target=None):
        seen.append((module.operation.get_asm(print_generic_op_form=True), dict(aliases), target))
        return PassContext()   # what the pipeline returns: nothing for the under-use hint
    monkeypatch.setattr(hook, "lower", stub)
    return seen


# ---------------------------------------------------------------------------------------------- passthrough

@pytest.mark.parametrize("cc", [90, 100])
def test_untagged_kernels_pass_through_untouched(calls, cc):
    off = compile_(k_plain, cc)
    hook.install()
    on = compile_(k_plain, cc)
    assert calls == []
    for ext in ("ttgir", "llir", "ptx", "cubin"):
        assert on.asm[ext] == off.asm[ext], ext


def test_untagged_module_is_the_same_object():
    seen = []

    def probe(backend, stages, options, language, capability):
        stage = stages["ttgir"]

        def record(mod, md):
            out = stage(mod, md)
            seen.append((out, hook.run_plugin(out, "cuda:90")))
            return out
        stages["ttgir"] = record
    _triton.set_stages_hook(_triton.stages_hook(probe, "probe"))
    compile_(k_plain)
    assert seen and seen[0][1] is seen[0][0]


def test_tagged_kernel_goes_through_the_pipeline(calls):
    off = compile_(k_tagged)
    hook.install()
    on = compile_(k_tagged)
    assert len(calls) == 1
    asm, aliases, target = calls[0]
    assert target == "cuda:90"
    assert 'tlx.spec = "spec0"' in asm and '"ttg.local_alloc"' in asm
    assert list(aliases) == ["#blocked", "#shared", "#smem"]
    # the identity pipeline round trip changes nothing Triton emits, line info included
    assert on.asm["ptx"] == off.asm["ptx"] and on.asm["cubin"] == off.asm["cubin"]
    assert hook.last_round_trip["total_ms"] > 0


def test_pipeline_edits_reach_triton(monkeypatch):
    """A stub that edits the upstream module: the edit is in what Triton compiles."""
    from tlx_alias._mlir import ir

    def mark(module, aliases, target=None):
        def visit(op):
            if op.name == "ttg.local_alloc":
                op.attributes["tlx.backing"] = ir.StringAttr.get("spec0", module.context)
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)
        return PassContext()
    monkeypatch.setattr(hook, "lower", mark)
    hook.install()
    assert 'tlx.backing = "spec0"' in compile_(k_tagged).asm["ttgir"]


# ---------------------------------------------------------------------------------------------- install

def test_chains_with_an_existing_hook_and_uninstall_restores_it(calls):
    seen = []

    def theirs(backend, stages, options, language, capability):
        seen.append(language)
        stage = stages["ttgir"]
        stages["ttgir"] = lambda mod, md: (seen.append("their ttgir"), stage(mod, md))[1]
    theirs = _triton.stages_hook(theirs, "theirs")
    _triton.set_stages_hook(theirs)
    hook.install()
    assert _triton.get_stages_hook() is not theirs
    compile_(k_tagged)
    assert len(calls) == 1 and "their ttgir" in seen
    if _triton.HOOK_KEYS_CACHE:  # our key extends theirs
        assert _triton.get_stages_hook()()[0].startswith("theirs-tlx_alias-")
    hook.uninstall()
    assert _triton.get_stages_hook() is theirs


def test_install_is_idempotent(calls):
    hook.install()
    first = _triton.get_stages_hook()
    hook.install()
    assert _triton.get_stages_hook() is first
    compile_(k_tagged)
    assert len(calls) == 1


def test_no_double_wrap_when_another_hook_chains_on_top_of_ours(calls):
    hook.install()
    ours = _triton.get_stages_hook()
    _triton.set_stages_hook(lambda *a: ours(*a))  # someone else chains over us
    hook.install()                                 # e.g. tlx_alias.language imported later
    compile_(k_tagged)
    assert len(calls) == 1


def test_concurrent_compiles(calls, monkeypatch):
    """Compiles from four threads at once, each through the bridge (the generic printout adds a block to its
    own module for a moment; the parse borrows file descriptor 2): each gets the kernel of a lone compile.

    (CPython 3.11's AST constructor is not thread-safe — "AST constructor recursion depth mismatch", seen
    here in Triton's own source parsing — so the parse of the kernel source is serialized; the plugin's
    part of each compile still runs in four threads at once.)"""
    import ast
    import threading
    from concurrent.futures import ThreadPoolExecutor
    lock, parse = threading.Lock(), ast.parse

    def locked_parse(*args, **kwargs):
        with lock:
            return parse(*args, **kwargs)
    monkeypatch.setattr(ast, "parse", locked_parse)
    ref = compile_(k_tagged).asm["ptx"]
    hook.install()
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: compile_(k_tagged).asm["ptx"], range(4)))
    assert outs == [ref] * 4 and len(calls) == 4


def test_tlx_alias_error_surfaces_from_triton_compile(monkeypatch):
    def fail(module, aliases, target=None):
        raise TlxAliasError("tlx-buffer-offset", "views overlap", "use distinct groups", "fa.py:42")
    monkeypatch.setattr(hook, "lower", fail)
    hook.install()
    with pytest.raises(TlxAliasError) as info:
        compile_(k_tagged)
    assert type(info.value) is TlxAliasError
    assert str(info.value) == "fa.py:42: error: [tlx-buffer-offset] views overlap. Fix: use distinct groups"
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_error_str_omits_missing_parts():
    assert str(TlxAliasError("local_alloc", "bad size", None)) == "error: [local_alloc] bad size"


# ---------------------------------------------------------------------------------------------- the proof's thread

def _probe_llir(started):
    """Set as the stages hook before ours (so ours wraps it): `started` is set when Triton's llir stage begins."""
    def probe(backend, stages, options, language, capability):
        llir = stages["llir"]

        def mark(src, metadata):
            started.set()
            return llir(src, metadata)
        stages["llir"] = mark
    _triton.set_stages_hook(_triton.stages_hook(probe, "probe"))


def _proof(started, seen, outcome=None, patience=20):
    """A stand-in for the Z3 proof: records whether llir began while it ran (waiting up to `patience` s for
    that), then raises `outcome` if it is an exception, else returns a clean report."""
    def prove(module, target, aliases):
        seen.append(started.wait(timeout=patience))
        if isinstance(outcome, BaseException):
            raise outcome
        return Report("sm_90", 90, ["k_tagged"], [], [])
    return prove


def test_the_proof_runs_while_triton_generates_code(calls, monkeypatch):
    started, seen = threading.Event(), []
    monkeypatch.setattr(hook, "prove", _proof(started, seen))
    _probe_llir(started)
    hook.install()
    compile_(k_tagged)
    assert seen == [True]                       # a proof inside the ttgir stage would have waited 20 s in vain
    assert hook.last_round_trip["proof_ms"] > 0


def test_the_proofs_work_counts_the_making_of_its_z3_context(calls, monkeypatch):
    """A proof's Z3 context is made ahead on another thread (`verify._z3_context`): its CPU time is the proof's
    work all the same, and the compile-cost table reads it from `proof_ms`."""
    def prove(module, target, aliases):
        return Report("sm_90", 90, ["k_tagged"], [], [], context_ms=40.0)
    monkeypatch.setattr(hook, "prove", prove)
    hook.install()
    compile_(k_tagged)
    assert 40.0 <= hook.last_round_trip["proof_ms"] < 1000.0


def test_a_verdict_found_during_code_generation_stops_the_compile(calls, monkeypatch):
    started, seen = threading.Event(), []
    found = TlxAliasError("tlx-verify P3", "violation: two buffers overlap", "use distinct groups", "fa.py:7")
    monkeypatch.setattr(hook, "prove", _proof(started, seen, outcome=found))
    _probe_llir(started)
    hook.install()
    with pytest.raises(TlxAliasError) as info:
        compile_(k_tagged)
    assert info.value is found and seen == [True]
    assert info.value.__suppress_context__


def test_the_proofs_verdict_outranks_a_later_stages_error(calls, monkeypatch):
    started, seen = threading.Event(), []
    found = TlxAliasError("tlx-verify P1", "violation: out of bounds", None, "fa.py:9")

    def capacity(*args):
        raise TlxAliasError("tlx-alias capacity", "the kernel needs more shared memory", None)
    monkeypatch.setattr(hook, "check_capacity", capacity)
    monkeypatch.setattr(hook, "prove", _proof(started, seen, outcome=found))
    _probe_llir(started)
    hook.install()
    with pytest.raises(TlxAliasError) as info:
        compile_(k_tagged)
    assert info.value is found
    monkeypatch.setattr(hook, "prove", _proof(started, seen))   # a clean proof: the stage's own error
    with pytest.raises(TlxAliasError, match="capacity"):
        compile_(k_tagged)


def test_a_crash_of_the_proof_surfaces_as_itself(calls, monkeypatch):
    started, seen = threading.Event(), []
    monkeypatch.setattr(hook, "prove", _proof(started, seen, outcome=RuntimeError("z3 crashed")))
    _probe_llir(started)
    hook.install()
    with pytest.raises(RuntimeError, match="z3 crashed"):
        compile_(k_tagged)


def test_warnings_of_the_proof_are_issued_on_the_compiling_thread(calls, monkeypatch):
    """Under TLX_ALIAS_PROOF=warn a "cannot prove" is a warning at the kernel line, caught like any other."""
    unknown = Verdict("P2", "buf", UNKNOWN, "buffers of one view", "the index is not followed", "fa.py:11")

    def prove(module, target, aliases):
        return Report("sm_90", 90, ["k_tagged"], [unknown], [])
    monkeypatch.setattr(hook, "prove", prove)
    monkeypatch.setenv("TLX_ALIAS_PROOF", "warn")
    hook.install()
    with pytest.warns(TlxAliasWarning, match=r"\[tlx-verify P2\] cannot prove: the index is not followed") as rec:
        compile_(k_tagged)
    assert [(w.filename, w.lineno) for w in rec if issubclass(w.category, TlxAliasWarning)] == [("fa.py", 11)]
    monkeypatch.setenv("TLX_ALIAS_PROOF", "error")
    with pytest.raises(TlxAliasError, match="cannot prove"):
        compile_(k_tagged)


@pytest.mark.parametrize("knob,value,says", [("TLX_ALIAS_P7_STEPS", "lots", "is not a positive number of ops"),
                                              ("TLX_ALIAS_P7_MIXED", "yes", "is neither 1 nor 0")])
def test_a_misspelt_p7_knob_fails_the_compile_before_the_proof_starts(calls, monkeypatch, knob, value, says):
    """P7's knobs are read before the proof's thread: a value they do not take stops the compile naming the knob,
    and no proof runs."""
    proved = []
    monkeypatch.setattr(hook, "prove", lambda *args: proved.append(args))
    monkeypatch.setenv(knob, value)
    hook.install()
    with pytest.raises(TlxAliasError, match=f"{knob}='{value}' {says}"):
        compile_(k_tagged)
    assert proved == []


def test_the_proof_is_waited_for_at_ttgir_when_another_hook_replaces_the_last_stage(calls, monkeypatch):
    """Triton runs the stages as the hooks leave them: if the last one is no longer ours, nothing later
    would wait for the proof, so the ttgir stage does."""
    started, seen = threading.Event(), []
    monkeypatch.setattr(hook, "prove", _proof(started, seen, patience=2))
    _probe_llir(started)
    hook.install()
    ours = _triton.get_stages_hook()

    def theirs(backend, stages, options, language, capability):
        ours(backend, stages, options, language, capability)
        last = list(stages)[-1]
        stages[last] = lambda src, metadata, run=stages[last]: run(src, metadata)
    _triton.set_stages_hook(_triton.stages_hook(theirs, "theirs"))
    compile_(k_tagged)
    assert seen == [False]


def test_on_one_core_the_proof_is_waited_for_at_ttgir(calls, monkeypatch):
    """With no core to spare the proof's thread would only take turns with Triton's stages: it is judged first."""
    started, seen = threading.Event(), []
    monkeypatch.setattr(hook, "prove", _proof(started, seen, patience=2))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    _probe_llir(started)
    hook.install()
    compile_(k_tagged)
    assert seen == [False]


def test_no_proof_thread_under_proof_off(calls, monkeypatch):
    started, seen = threading.Event(), []
    monkeypatch.setattr(hook, "prove", _proof(started, seen))
    monkeypatch.setenv("TLX_ALIAS_PROOF", "off")
    hook.install()
    compile_(k_tagged)
    assert seen == [] and len(calls) == 1


# ---------------------------------------------------------------------------------------------- cache

@pytest.fixture
def cache_events(monkeypatch):
    monkeypatch.delenv("TRITON_ALWAYS_COMPILE")
    events = []
    monkeypatch.setattr(triton.knobs.compilation, "listener",
                        lambda src, metadata, metadata_group, times, cache_hit: events.append(
                            (metadata["hash"], cache_hit)))
    return events


def test_cache_never_mixes_plugin_states(calls, cache_events, monkeypatch):
    compile_(k_tagged)                      # plugin off
    hook.install()
    compile_(k_tagged)                      # plugin on: must compile, not reuse the plugin-off kernel
    compile_(k_tagged)                      # plugin on again: now a cache hit
    monkeypatch.setenv("TLX_ALIAS_PROOF", "off")
    compile_(k_tagged)                      # a TLX_ALIAS_ knob changed: new key
    hook.uninstall()
    compile_(k_tagged)                      # plugin off again: the first kernel, key unchanged
    (h_off, hit0), (h_on, hit1), (h_on2, hit2), (h_env, hit3), (h_off2, hit4) = cache_events
    assert not hit0 and not hit1 and hit2 and not hit3 and hit4
    assert len({h_off, h_on, h_env}) == 3 and h_on2 == h_on and h_off2 == h_off
    assert len(calls) == 2                  # the pipeline ran for both fresh plugin-on compiles


def test_the_cache_key_covers_every_source_that_shapes_a_kernel():
    """Editing a pass or the proof must miss Triton's cache: the key hashes every module of the frontend, the
    plugin, the passes and the proof, wherever the install put them (subfolders of tlx_alias in a wheel,
    folders beside it in the source tree), and not the bundled kernels."""
    import tlx_alias.language
    import tlx_alias.python_passes.storage_alias_allocation
    import tlx_alias.verify.encode
    keyed = dict(hook.keyed_sources())
    for module in (tlx_alias.language, tlx_alias.python_passes.storage_alias_allocation, tlx_alias.verify.encode, hook):
        assert os.path.samefile(keyed[module.__name__], module.__file__)
    assert not any(name.startswith("tlx_alias.kernels") for name in keyed)


def test_the_plugin_version_changes_with_a_source(monkeypatch, tmp_path):
    source = tmp_path / "a_pass.py"
    monkeypatch.setattr(hook, "keyed_sources", lambda: [("tlx_alias.python_passes.a_pass", str(source))])
    versions = []
    for text in ("X = 1\n", "X = 2\n", "X = 1\n"):
        source.write_text(text)
        monkeypatch.setattr(hook, "_version", None)
        versions.append(hook.plugin_version())
    assert versions[0] != versions[1] and versions[0] == versions[2]


def test_cache_key_suffix_names_version_and_knobs(monkeypatch):
    monkeypatch.setenv("TLX_ALIAS_PROOF", "warn")
    suffix = hook.cache_key_suffix()
    assert hook.plugin_version() in suffix and "('TLX_ALIAS_PROOF', 'warn')" in suffix
    import triton.compiler.compiler as cc
    orig = cc.get_cache_key
    hook.install()
    if _triton.HOOK_KEYS_CACHE:  # Triton >= 3.7 keys its caches on what the hook answers
        key, digest = _triton.get_stages_hook()()
        assert key == suffix and cc.get_cache_key is orig
        monkeypatch.setenv("TLX_ALIAS_PROOF", "error")
        assert _triton.get_stages_hook()()[1] != digest
    else:  # 3.6: the cache-key function is patched
        assert cc.get_cache_key is not orig and getattr(cc.get_cache_key, "__tlx_alias_orig__") is orig
    hook.uninstall()
    assert cc.get_cache_key is orig
    if _triton.HOOK_KEYS_CACHE:
        assert _triton.get_stages_hook() is None


# ---------------------------------------------------------------------------------------------- activation

def _run(code, tmp_path, env_value, site_dir=True):
    """Run `code` in a fresh interpreter whose start-up processes a copy of plugin/tlx_alias.pth.

    The wheel installs that file at the site-packages root (pyproject force-include); here it sits in a
    temporary directory handed to `site.addsitedir` first thing, which processes .pth files the way
    start-up does for site-packages.
    """
    d = tmp_path / "site"
    d.mkdir(exist_ok=True)
    (d / "tlx_alias.pth").write_text(Path(PTH).read_text())
    prelude = f"import site; site.addsitedir({str(d)!r})\n" if site_dir else ""
    env = {k: v for k, v in os.environ.items() if k != activation.ENV}
    if env_value is not None:
        env[activation.ENV] = env_value
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


CHECK = """
import sys
before = ("triton" in sys.modules, "tlx_alias" in sys.modules)
import triton
from tlx_alias.plugin import activation, hook
print(before[0], before[1], hook.is_installed())
"""


@pytest.mark.parametrize("value, expected", [
    ("tlx_alias", ["False", "True", "True"]),           # armed, triton not imported at start-up
    ("foo, tlx_alias", ["False", "True", "True"]),      # a comma list
    ("foo", ["False", "False", "False"]),               # other plugins only: not even our package imported
    (None, ["False", "False", "False"]),                # unset: inert
])
def test_pth_activation(tmp_path, value, expected):
    assert _run(CHECK, tmp_path, value) == expected


def test_pth_line_is_inert_when_unset(tmp_path):
    out = _run("import sys; print(sorted(m for m in sys.modules if m.startswith(('triton', 'tlx_alias', 'torch'))))",
               tmp_path, None)
    assert out == ["[]"]


def test_pth_activation_end_to_end(tmp_path):
    """A user script with no tlx_alias import: the hook runs the pipeline on a tagged kernel."""
    script = tmp_path / "user_kernel.py"
    script.write_text(textwrap.dedent('''
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.experimental import gluon
        from triton.experimental.gluon import language as gl
        from triton.experimental.gluon._runtime import GluonASTSource
        from triton.experimental.gluon.language._core import builtin

        @builtin
        def tag(desc, _semantic=None):
            desc.handle.set_attr("tlx.spec", _semantic.builder.get_string_attr("spec0"))
            return desc

        @gluon.jit
        def k(x_ptr):
            layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
            smem = tag(gl.allocate_shared_memory(gl.float32, [2, 32, 32], layout))
            blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
            gl.store(x_ptr + gl.arange(0, 32, layout=gl.SliceLayout(1, blocked)),
                     gl.sum(smem.index(1).load(blocked), axis=1))

        def compile_():
            return triton.compile(GluonASTSource(k, {"x_ptr": "*fp32"}, {}), target=GPUTarget("cuda", 90, 32))
    '''))
    code = f"""
    import sys, os
    sys.path.insert(0, {str(tmp_path)!r})
    os.environ["TRITON_CACHE_DIR"] = {str(tmp_path / "cache")!r}
    import user_kernel
    import tlx_alias.plugin.hook as hook
    seen = []
    from tlx_alias.python_passes._ir import PassContext
    hook.lower = lambda module, aliases, target=None: seen.append(target) or PassContext()
    user_kernel.compile_()
    print(seen)
    """
    assert _run(code, tmp_path, "tlx_alias") == ["['cuda:90']"]


def test_installed_pth(tmp_path):
    """Every install mode (wheel, editable) puts the real start-up file in site-packages: check it too."""
    import sysconfig
    installed = os.path.join(sysconfig.get_paths()["purelib"], "tlx_alias.pth")
    assert os.path.exists(installed), "tlx_alias.pth is missing from site-packages"
    assert _run(CHECK, tmp_path, "tlx_alias", site_dir=False) == ["False", "True", "True"]
    assert _run(CHECK, tmp_path, None, site_dir=False) == ["False", "False", "False"]
