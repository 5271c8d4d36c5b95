"""Views of a whole multi-buffer aliased descriptor (issue 12, item 6).

`local_alloc(..., reuse=spec)` returns a `[num, *shape]` descriptor whose buffers are addressed one index at a
time. Triton itself aborts the whole process (an assertion in `combineCtaCgaWithShape`, not a Python error) on
`.permute()` / `.reshape()` of such a 3-D shared memory descriptor (3.6-3.9), on `.slice()` along the buffer
dimension (3.6-3.8) and along the last dimension (3.6). The frontend stops every view of the whole descriptor
(`slice`, `permute`, `reshape`, `_reinterpret` / `reinterpret`) with a TlxAliasError at the kernel line; views of
one buffer (`.index(i).permute(...)`) stay ordinary Gluon.
"""
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

import tlx_alias.language as tlx
from tlx_alias import _triton as compat
from tlx_alias.errors import TlxAliasError

from test_frontend import line_of

HOPPER, BLACKWELL = GPUTarget("cuda", 90, 32), GPUTarget("cuda", 100, 32)
BL: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
REINTERPRET = "reinterpret" if hasattr(gl.shared_memory_descriptor, "reinterpret") else "_reinterpret"


pytestmark = pytest.mark.usefixtures("plugin")


def compile_kernel(fn, constexprs, target=HOPPER):
    sig = dict({"x_ptr": "*fp32"}, **{k: "constexpr" for k in constexprs})
    return triton.compile(GluonASTSource(fn, sig, constexprs), target=target)


def tlx_error(exc_info):
    err = exc_info.value
    while err is not None and not isinstance(err, TlxAliasError):
        err = err.__cause__ or err.__context__
    assert err is not None, exc_info.value
    return err


@gluon.jit
def _permute_whole(a):
    return a.permute((0, 2, 1))  # @helper-permute


@gluon.jit
def smem_view_kernel(x_ptr, OP: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)  # @alloc
    x = gl.full([64, 64], 0, gl.float16, BL)
    if OP == "index-first":
        x = a.index(1).permute((1, 0)).load(BL)
    if OP == "slice-dim0":
        x = a.slice(0, 1, dim=0).index(0).load(BL)  # @slice-dim0
    if OP == "slice-dim1":
        x = a.slice(0, 32, dim=1).index(0).load(BL)  # @slice-dim1
    if OP == "slice-dim2":
        x = a.slice(0, 32, dim=2).index(0).load(BL)  # @slice-dim2
    if OP == "permute":
        x = a.permute((0, 2, 1)).index(0).load(BL)  # @permute
    if OP == "reshape":
        x = a.reshape((2, 4096)).index(0).load(BL)  # @reshape
    if OP == "reinterpret":
        y = compat.reinterpret(a, gl.float16, [128, 64], a.layout)  # @reinterpret
    if OP == "helper":
        y = _permute_whole(a)
    gl.store(x_ptr + gl.arange(0, 64, layout=gl.SliceLayout(1, BL)), gl.sum(x.to(gl.float32), axis=1))


@pytest.mark.parametrize("op", ["slice-dim0", "slice-dim1", "slice-dim2", "permute", "reshape", "reinterpret"])
def test_a_view_of_the_whole_smem_descriptor_is_an_error_at_its_line(op):
    with pytest.raises(CompilationError) as exc:
        compile_kernel(smem_view_kernel, {"OP": op})
    err = tlx_error(exc)
    method = {"slice-dim0": "slice", "slice-dim1": "slice", "slice-dim2": "slice"}.get(op, op)
    method = REINTERPRET if method == "reinterpret" else method
    assert err.src == f"{smem_view_kernel.fn.__code__.co_filename}:{line_of(smem_view_kernel, '# @' + op)}"
    assert err.where == f"a.{method}" and "[2, 64, 64]" in err.problem
    assert f"allocated at {smem_view_kernel.fn.__code__.co_filename}:{line_of(smem_view_kernel, '# @alloc')}" \
        in err.problem
    assert err.fix == f"select one buffer first: a.index(i).{method}(...)"


def test_the_error_names_the_helper_line_when_a_helper_takes_the_view():
    with pytest.raises(CompilationError) as exc:
        compile_kernel(smem_view_kernel, {"OP": "helper"})
    assert tlx_error(exc).src.endswith(f":{line_of(_permute_whole, '# @helper-permute')}")


def test_views_of_one_buffer_stay_ordinary_gluon():
    k = compile_kernel(smem_view_kernel, {"OP": "index-first"})
    assert k.metadata.shared == 16384 and "ttg.memdesc_trans" in k.asm["ttgir"]


@gluon.jit
def tmem_view_kernel(x_ptr, OP: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    acc = tlx.local_alloc((128, 64), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)
    if OP == "slice":
        v = acc.slice(0, 32)  # @tmem-slice
    if OP == "reinterpret":
        v = compat.reinterpret(acc, gl.float32, [2, 128, 64], acc.layout)  # @tmem-reinterpret


@pytest.mark.parametrize("op", ["slice", "reinterpret"])
def test_a_view_of_the_whole_tmem_descriptor_is_an_error_at_its_line(op):
    with pytest.raises(CompilationError) as exc:
        compile_kernel(tmem_view_kernel, {"OP": op}, BLACKWELL)
    err = tlx_error(exc)
    assert err.src.endswith(f":{line_of(tmem_view_kernel, '# @tmem-' + op)}") and "[2, 128, 64]" in err.problem


# Triton's own behaviour on the same views of a plain (not aliased) 3-D descriptor: what the frontend spares the
# user. Each compile runs in a child process, since the abort kills it.
PLAIN = textwrap.dedent('''
    import sys
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    @gluon.jit
    def kernel(x_ptr, OP: gl.constexpr):
        BL: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
        a = gl.allocate_shared_memory(gl.float16, [2, 64, 64], gl.NVMMASharedLayout.get_default_for([64, 64],
                                                                                                    gl.float16))
        if OP == "permute":
            x = a.permute((0, 2, 1)).index(0).load(BL)
        if OP == "reshape":
            x = a.reshape((2, 4096)).index(0).load(BL)
        if OP == "slice-dim0":
            x = a.slice(0, 1, dim=0).index(0).load(BL)
        gl.store(x_ptr + gl.arange(0, 64, layout=gl.SliceLayout(1, BL)), gl.sum(x.to(gl.float32), axis=1))

    src = GluonASTSource(kernel, {"x_ptr": "*fp32", "OP": "constexpr"}, {"OP": sys.argv[1]})
    try:
        triton.compile(src, target=GPUTarget("cuda", 90, 32))
    except Exception as exc:
        print(type(exc).__name__)
    ''')


ABORTS = [("permute", (3, 6), (3, 9)), ("reshape", (3, 6), (3, 9)), ("slice-dim0", (3, 6), (3, 8))]


@pytest.mark.parametrize("op,first,last", ABORTS)
def test_triton_aborts_on_the_same_view_of_a_plain_descriptor(tmp_path, op, first, last):
    if not first <= compat.VERSION[:2] <= last:
        pytest.skip(f"Triton {first}-{last} abort on this view")
    script = tmp_path / "plain.py"
    script.write_text(PLAIN)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TRITON_PASS_PLUGIN", None)
    proc = subprocess.run([sys.executable, str(script), op], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == -signal.SIGABRT and "combineCtaCgaWithShape" in proc.stderr, proc.stderr[-2000:]
