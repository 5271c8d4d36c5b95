"""What the process around a compile can do to the pipeline: another stages hook, an override file, compiles in
threads, a fork. Each case a helper session found by compiling small kernels the ways Triton 3.9 users do
(2026-11-27): before the fix beside it, a kernel that uses the API compiled unshared and unproven with no word,
a racy override compiled, an error named another kernel's line, or a forked child hung.
"""
import inspect
import os

import pytest
import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

import tlx_alias.language as tlx
from tlx_alias import _triton as compat
from tlx_alias import verify
from tlx_alias.errors import TlxAliasError, TlxAliasWarning
from tlx_alias.plugin import hook

HOPPER = GPUTarget("cuda", 90, 32)
SMEM = tlx.storage_kind.smem

pytestmark = pytest.mark.usefixtures("plugin")


@gluon.jit
def two_tiles_kernel(out_ptr, RACY: gl.constexpr, PAD: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=SMEM)  # LINE-SPEC
    x = tlx.local_alloc((32, 32), gl.float32, 1, SMEM, reuse=spec)
    y = tlx.local_alloc((32, 32), gl.float32, 1, SMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(x, y, group_type=tlx.reuse_group_type.shared))
    blocked: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    v = gl.full([32, 32], 1.0, gl.float32, blocked)
    x.index(0).store(v)
    if RACY:   # y lies on x: written over it before x is read
        y.index(0).store(v + 1)
        a = x.index(0).load(blocked)
    else:
        a = x.index(0).load(blocked)
        y.index(0).store(a + 1)
    b = y.index(0).load(blocked)
    if PAD:    # two plain buffers of 128 KiB: each fits the SM, the kernel does not
        flat: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
        pad = gl.allocate_shared_memory(gl.float32, [32, 1024], flat, gl.full([32, 1024], 2.0, gl.float32, blocked))
        more = gl.allocate_shared_memory(gl.float32, [32, 1024], flat, gl.full([32, 1024], 3.0, gl.float32, blocked))
        b = b + pad.slice(0, 32, dim=1).load(blocked) + more.slice(0, 32, dim=1).load(blocked)
    gl.store(out_ptr + gl.arange(0, 32, layout=gl.SliceLayout(1, blocked)), gl.sum(a + b, axis=1))


def compile_tiles(racy=False, pad=False, **options):
    src = GluonASTSource(two_tiles_kernel, {"out_ptr": "*fp32", "RACY": "constexpr", "PAD": "constexpr"},
                         {"RACY": racy, "PAD": pad})
    return triton.compile(src, target=HOPPER, options=options or None)


def line_of(marker):
    lines, start = inspect.getsourcelines(two_tiles_kernel.fn)
    return f"{__file__}:{start + next(i for i, text in enumerate(lines) if marker in text)}"


def def_line():
    return f"{__file__}:{inspect.getsourcelines(two_tiles_kernel.fn)[1] + 1}"


# --- another stages hook ------------------------------------------------------------------------------------

def test_a_stages_hook_set_later_that_does_not_call_ours_is_refused(monkeypatch):
    """A hook set after `import tlx_alias.language` that replaces ours took the lowering out of the pipeline:
    the kernel compiled unshared, a racy one with no proof. The frontend now refuses at the spec's line."""
    seen = []
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook",
                        compat.stages_hook(lambda *args: seen.append(args[1]), "user"))
    with pytest.raises(CompilationError) as info:   # raised while Gluon traces the kernel
        compile_tiles()
    text = str(info.value)
    assert seen and f"{line_of('LINE-SPEC')}: error: [tlx.storage_alias_spec]" in text, text
    assert "not in this compile's pipeline" in text and "call the previous hook from yours" in text, text


def test_a_stages_hook_set_later_that_calls_ours_keeps_the_pipeline(monkeypatch):
    prev = knobs.runtime.add_stages_inspection_hook
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook",
                        compat.stages_hook(lambda *args: prev(*args), "user"))
    assert compile_tiles().metadata.shared == 32 * 32 * 4            # x and y on one buffer
    with pytest.raises(TlxAliasError, match=r"\[tlx-verify P7\] violation"):
        compile_tiles(racy=True)


def test_a_hook_that_replaces_the_ttgir_stage_is_refused_at_llir(monkeypatch):
    prev = knobs.runtime.add_stages_inspection_hook

    def replace_ttgir(backend, stages, options, language, capability):
        prev(backend, stages, options, language, capability)
        stages["ttgir"] = lambda src, metadata: backend.make_ttgir(src, metadata, options, capability) \
            if hasattr(backend, "make_ttgir") else src
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", compat.stages_hook(replace_ttgir, "user"))
    with pytest.raises(TlxAliasError, match="reached Triton's llir stage without its lowering"):
        compile_tiles()


# --- override files ------------------------------------------------------------------------------------------

def test_a_ttgir_override_is_lowered_and_proven(tmp_path, monkeypatch):
    """Triton parses an override file in place of the ttgir stage's output (`ir_override`, TRITON_KERNEL_OVERRIDE):
    the plugin had proven the module it lowered, and the override compiled unproven. Now the override is
    proven (lowered first where it still carries the frontend's tags)."""
    monkeypatch.setenv("TLX_ALIAS_PROOF", "off")
    racy = tmp_path / "racy.ttgir"
    racy.write_text(compile_tiles(racy=True).asm["ttgir"])
    safe = tmp_path / "safe.ttgir"
    safe.write_text(compile_tiles().asm["ttgir"])
    monkeypatch.delenv("TLX_ALIAS_PROOF")
    assert compile_tiles(racy=True, ir_override=str(safe)).metadata.shared == 32 * 32 * 4
    with pytest.raises(TlxAliasError, match=r"\[tlx-verify P7\] violation.*x reads bytes that y wrote over"):
        compile_tiles(ir_override=str(racy))


def test_an_override_after_ttgir_is_named_in_a_warning(tmp_path):
    ptx = tmp_path / "kernel.ptx"
    ptx.write_text(compile_tiles().asm["ptx"])
    with pytest.warns(TlxAliasWarning, match="ptx was replaced by an override file: the proof covers the ttgir"):
        compile_tiles(ir_override=str(ptx))


# --- threads and fork ----------------------------------------------------------------------------------------

def test_the_hook_reads_its_own_compiles_facts(monkeypatch):
    """The capacity check and the under-use hint read the kernel's line and its separations from the process's
    latest round trip, which another thread's compile rewrites: a capacity error named another kernel's line."""
    start = hook.start_plugin

    def then_another_compile(*args, **kwargs):
        out = start(*args, **kwargs)
        hook.last_round_trip.update(kernel_src="another_kernel.py:1", separations=[])
        return out
    monkeypatch.setattr(hook, "start_plugin", then_another_compile)
    with pytest.raises(TlxAliasError) as info:
        compile_tiles(pad=True)
    assert str(info.value).startswith(f"{def_line()}: error: [tlx-alias capacity]"), str(info.value)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_child_forked_during_a_proof_can_prove():
    """The proof's lock, held by a proof's thread when the process forks, stayed held in the child forever."""
    with verify._z3["lock"]:
        pid = os.fork()
        if pid == 0:   # the child: its first proof takes the lock
            got = verify._z3["lock"].acquire(timeout=10)
            os._exit(0 if got else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_without_line_info_errors_name_the_spec_line(monkeypatch):
    """TRITON_DISABLE_LINE_INFO=1 builds the IR without locations: the proof's violation and the capacity error
    named no line ("?", None). They fall back to the spec's line from the frontend's record."""
    monkeypatch.setenv("TRITON_DISABLE_LINE_INFO", "1")
    with pytest.raises(TlxAliasError) as info:
        compile_tiles(racy=True)
    assert str(info.value).startswith(f"{line_of('LINE-SPEC')}: error: [tlx-verify P7] violation"), str(info.value)
    with pytest.raises(TlxAliasError) as info:
        compile_tiles(pad=True)
    assert str(info.value).startswith(f"{line_of('LINE-SPEC')}: error: [tlx-alias capacity]"), str(info.value)
