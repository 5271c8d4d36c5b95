"""The frontend (tlx_alias.language) on real Gluon compiles, without the lowering plugin.

Each kernel is compiled for sm_90a (SMEM) or sm_100a (TMEM) with the stages hook off, and the checks read
Contract 1 in the ttgir Gluon's own passes return (after inlining): the module's `tlx.specs` record and the
ids on the allocation ops. Trace-time mistakes must raise TlxAliasError naming the user's kernel line.
"""
import functools
import inspect
import json
import re

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryScalesLayout
from tlx_alias import _triton as compat

import tlx_alias.language as tlx
from tlx_alias.errors import TlxAliasError, TlxAliasWarning
from tlx_alias.plugin import hook

HOPPER, BLACKWELL = 90, 100


@pytest.fixture(autouse=True)
def _frontend_only(tmp_path):
    """No plugin hook, a private cache, always compile: the ttgir is Gluon's own, from this code."""
    with triton.knobs.runtime.scope(), triton.knobs.compilation.scope(), triton.knobs.cache.scope(), \
            hook.unlowered():
        triton.knobs.runtime.add_stages_inspection_hook = None
        triton.knobs.compilation.always_compile = True
        triton.knobs.cache.dir = str(tmp_path)
        yield


def compile_ttgir(kernel, arch, constexprs=None, signature=None):
    src = GluonASTSource(kernel, signature or {"x_ptr": "*fp32"}, constexprs or {})
    return triton.compile(src, target=GPUTarget("cuda", arch, 32)).asm["ttgir"]


def line_of(kernel, marker):
    """Absolute file line of the kernel source line containing `marker`."""
    lines, start = inspect.getsourcelines(kernel.fn)
    hits = [start + i for i, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def src_of(kernel, marker):
    return f"{kernel.fn.__code__.co_filename}:{line_of(kernel, marker)}"


def _unescape(text):
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def allocs(ttgir):
    """{%name: {op, tlx.spec, tlx.alloc}} for every tagged allocation op in the ttgir."""
    out = {}
    for line in ttgir.splitlines():
        m = re.match(r"\s*%(\w+) = (ttg\.local_alloc|ttng\.tmem_alloc)[^{]*\{(.*)\} :", line)
        if not m or "tlx." not in m.group(3):
            continue
        attrs = dict(re.findall(r'(tlx\.\w+) = "([^"]*)"', m.group(3)))
        out[m.group(1)] = dict(attrs, op=m.group(2))
    return out


def facts(ttgir):
    """The module's `tlx.specs` record (contract 1), and its raw text."""
    m = re.search(r'tlx\.specs = "((?:[^"\\]|\\.)*)"', ttgir)
    raw = _unescape(m.group(1))
    return json.loads(raw), raw


# ----------------------------------------------------------------------------- seed 000: FA in TMEM


@gluon.jit
def _touch_tmem(buf, N: gl.constexpr, dtype: gl.constexpr):
    """A store keeps the allocation alive (Gluon drops unused ones before the ttgir stage ends)."""
    rl: gl.constexpr = compat.tmem_reg_layout(dtype, (128, N), buf.layout, gl.num_warps())
    buf.index(0).store(gl.full([128, N], 0, dtype, rl))


@gluon.jit
def _fa_allocs(spec, S: gl.constexpr):
    qk = tlx.local_alloc((128, 128), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)  # @qk
    p = tlx.local_alloc((128, 128 // S), gl.bfloat16, 2 * S, tlx.storage_kind.tmem, reuse=spec)  # @p
    alpha = tlx.local_alloc((128, 1), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)  # @alpha
    l = tlx.local_alloc((128, 1), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)  # @l
    m = tlx.local_alloc((128, 1), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)  # @m
    return qk, p, alpha, l, m


@gluon.jit
def _fa_kernel(x_ptr, S: gl.constexpr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)  # @spec
    qk, p, alpha, l, m = _fa_allocs(spec, S)
    spec.set_buffer_overlap(  # @overlap
        tlx.reuse_group(  # @root
            qk,
            tlx.reuse_group(  # @distinct
                tlx.reuse_group(p, group_size=S),  # @sub
                alpha, l, m,
                group_type=tlx.reuse_group_type.distinct),
            group_type=tlx.reuse_group_type.shared))
    _touch_tmem(qk, 128, gl.float32)
    _touch_tmem(p, 128 // S, gl.bfloat16)
    _touch_tmem(alpha, 1, gl.float32)
    _touch_tmem(l, 1, gl.float32)
    _touch_tmem(m, 1, gl.float32)


@pytest.mark.parametrize("S", [1, 2])
def test_fa_tree_facts_survive_inlining(S):
    ttgir = compile_ttgir(_fa_kernel, BLACKWELL, {"S": S})
    found = allocs(ttgir)
    assert {n: (v["op"], v["tlx.spec"], v["tlx.alloc"]) for n, v in found.items()} == {
        name: ("ttng.tmem_alloc", "spec0", f"a{i}") for i, name in enumerate(["qk", "p", "alpha", "l", "m"])}
    h, k = _fa_allocs, _fa_kernel
    tree = {"kind": "shared", "group_size": 1, "src": src_of(k, "# @root"), "children": [
        "a0", {"kind": "distinct", "group_size": 1, "src": src_of(k, "# @distinct"), "children": [
            {"kind": "shared", "group_size": S, "src": src_of(k, "# @sub"), "children": ["a1"]}, "a2", "a3", "a4"]}]}
    spec = facts(ttgir)[0]["spec0"]
    assert (spec["storage"], spec["size"], spec["src"]) == ("tmem", None, src_of(k, "# @spec"))
    assert spec["tree"] == tree and spec["tree_src"] == src_of(k, "# @overlap")
    assert {a: (m["name"], m["src"]) for a, m in spec["members"].items()} == {
        f"a{j}": (leaf, src_of(h, f"# @{leaf}")) for j, leaf in enumerate(["qk", "p", "alpha", "l", "m"])}
    assert spec["members"]["a0"]["type"].startswith("!ttg.memdesc<2x128x128xf32, #ttng.tensor_memory_encoding<")


def test_fa_types_and_default_tmem_layouts():
    ttgir = compile_ttgir(_fa_kernel, BLACKWELL, {"S": 2})
    assert "blockM = 128, blockN = 64, colStride = 1" in ttgir  # P: bf16 packed, 32 columns a buffer
    assert "blockM = 128, blockN = 1, colStride = 1" in ttgir
    for ty in ("2x128x128xf32", "4x128x64xbf16", "2x128x1xf32"):
        assert f"!ttg.memdesc<{ty}, " in ttgir


def test_facts_json_is_compact_and_ordered():
    record, raw = facts(compile_ttgir(_fa_kernel, BLACKWELL, {"S": 2}))
    assert raw == json.dumps(record, separators=(",", ":"))
    assert list(record["spec0"]["tree"]) == ["kind", "group_size", "src", "children"]


@gluon.jit
def _ring(spec):
    return tlx.local_alloc((128, 64), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)  # @err


@gluon.jit
def _worker(qk, p):
    _touch_tmem(qk, 64, gl.float32)
    _touch_tmem(p, 64, gl.float32)


@gluon.jit
def _default(spec, qk, p):
    spec.set_buffer_overlap(tlx.reuse_group(qk, p))


@gluon.jit
def _helper_twice_ws_kernel(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    qk = _ring(spec)
    p = _ring(spec)  # the same helper again: its own allocation, its own id
    gl.warp_specialize([(_default, (spec, qk, p)), (_worker, (qk, p))], [4], [24])


def test_helper_called_twice_and_warp_specialize():
    ttgir = compile_ttgir(_helper_twice_ws_kernel, BLACKWELL)
    assert [v["tlx.alloc"] for v in allocs(ttgir).values()] == ["a0", "a1"]
    spec = facts(ttgir)[0]["spec0"]
    assert list(spec["members"]) == ["a0", "a1"] and spec["tree"]["children"] == ["a0", "a1"]


# ----------------------------------------------------------------------------- SMEM on Hopper


@gluon.jit
def _set_overlap(spec, a, b, c, DISTINCT: gl.constexpr):
    if DISTINCT:
        inner = tlx.reuse_group(b, c, group_type=tlx.reuse_group_type.distinct)  # @inner
        spec.set_buffer_overlap(tlx.reuse_group(a, inner))  # @d
    else:
        spec.set_buffer_overlap(tlx.reuse_group(a, b, c))  # @s


@gluon.jit
def _smem_kernel(x_ptr, n, DISTINCT: gl.constexpr):
    spec = tlx.storage_alias_spec(buffer_size_bytes=65536)  # @spec
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    b = tlx.local_alloc((128, ), gl.float32, 3, reuse=spec)
    c = tlx.local_alloc((2, 16, 64), gl.float16, 2, reuse=spec)
    plain = gl.allocate_shared_memory(gl.float32, [64], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    plain2 = tlx.local_alloc((64, 64), gl.float16, 1)
    _set_overlap(spec, a, b, c, DISTINCT)
    bl: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    l1: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    l3: gl.constexpr = gl.BlockedLayout([1, 1, 1], [1, 1, 32], [4, 1, 1], [2, 1, 0])
    for i in range(n):  # tagged descriptors cross scf.for regions like plain ones
        a.index(i % 2).store(gl.full([64, 64], 1.0, gl.float16, bl))
        b.index(i % 3).store(gl.full([128], 1.0, gl.float32, l1))
    c.index(0).store(gl.full([2, 16, 64], 1.0, gl.float16, l3))
    plain.store(gl.full([64], 1.0, gl.float32, l1))
    plain2.index(0).store(gl.full([64, 64], 1.0, gl.float16, bl))


@pytest.mark.parametrize("distinct", [True, False])
def test_smem_spec_with_plain_allocations_alongside(distinct):
    ttgir = compile_ttgir(_smem_kernel, HOPPER, {"DISTINCT": distinct}, {"x_ptr": "*fp32", "n": "i32"})
    found = allocs(ttgir)
    assert list(found) == ["a", "b", "c"]  # the plain allocations carry no tags
    assert [v["tlx.alloc"] for v in found.values()] == ["a0", "a1", "a2"]
    assert re.search(r"%plain = ttg\.local_alloc :", ttgir) and re.search(r"%plain2 = ttg\.local_alloc :", ttgir)
    spec = facts(ttgir)[0]["spec0"]
    src = src_of(_set_overlap, "# @d" if distinct else "# @s")
    assert (spec["storage"], spec["size"], spec["tree_src"]) == ("smem", 65536, src)
    tree = spec["tree"]
    assert tree["src"] == src and tree["children"][0] == "a0"
    inner = {"kind": "distinct", "group_size": 1, "src": src_of(_set_overlap, "# @inner"), "children": ["a1", "a2"]}
    assert tree["children"][1:] == ([inner] if distinct else ["a1", "a2"])
    assert "!ttg.memdesc<3x128xf32, #shared1" in ttgir  # 1-D: SwizzledSharedLayout(1, 1, 1, [0])
    assert "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, rank = 3}>" in ttgir


@gluon.jit
def _two_specs(x_ptr):
    s0 = tlx.storage_alias_spec()
    s1: gl.constexpr = tlx.storage_alias_spec()  # a constexpr spec is fine inside the kernel itself
    a = tlx.local_alloc((64, 64), gl.float16, 1, reuse=s0)
    b = tlx.local_alloc((64, 64), gl.float16, 1, reuse=s1)
    a._keep_alive()
    b._keep_alive()


def test_ids_are_per_kernel_and_restart_each_compile():
    for _ in range(2):
        ttgir = compile_ttgir(_two_specs, HOPPER)
        assert [(v["tlx.spec"], v["tlx.alloc"]) for v in allocs(ttgir).values()] == [("spec0", "a0"), ("spec1", "a1")]
        record = facts(ttgir)[0]
        assert list(record) == ["spec0", "spec1"]
        assert all(s["tree"] is None and s["size"] is None and not s["implicit"] for s in record.values())


# ----------------------------------------------------------------------------- legacy reuse=<descriptor>


@gluon.jit
def _legacy_kernel(x_ptr):
    a = tlx.local_alloc((64, 64), gl.float16, 2)
    old = tlx.local_alloc((32, 64), gl.float32, 2, reuse=a)  # @smem
    t = tlx.local_alloc((128, 64), gl.float32, 2, tlx.storage_kind.tmem)
    u = tlx.local_alloc((128, 64), gl.bfloat16, 4, tlx.storage_kind.tmem, reuse=t)  # @tmem
    bl: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    old.index(1).store(gl.full([32, 64], 1.0, gl.float32, bl))
    _touch_tmem(u, 64, gl.bfloat16)


def test_legacy_reuse_joins_the_reused_buffer_in_an_implicit_spec():
    with pytest.warns(TlxAliasWarning, match=r"legacy alias; declare the sharing instead") as caught:
        ttgir = compile_ttgir(_legacy_kernel, BLACKWELL)
    found = allocs(ttgir)
    # the warning points at each legacy call's line
    assert sorted(f"{w.filename}:{w.lineno}" for w in caught if "legacy" in str(w.message)) == sorted(
        [src_of(_legacy_kernel, "# @smem"), src_of(_legacy_kernel, "# @tmem")])
    # `a` and `t` are dead (only their aliases are used) and Gluon removed them; the aliases are tagged
    # members of two implicit specs without a tree, whose records still name the reused buffers
    assert set(found) == {"old", "u"} and found["u"]["tlx.spec"] != found["old"]["tlx.spec"]
    record = facts(ttgir)[0]
    smem, tmem = record[found["old"]["tlx.spec"]], record[found["u"]["tlx.spec"]]
    assert (smem["storage"], tmem["storage"]) == ("smem", "tmem")
    assert all(s["tree"] is None and len(s["members"]) == 2 for s in (smem, tmem))
    assert tmem["members"][found["u"]["tlx.alloc"]]["src"] == src_of(_legacy_kernel, "# @tmem")


# ----------------------------------------------------------------------------- trace-time errors


@gluon.jit
def _err_cluster(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smemCluster)  # @err


@gluon.jit
def _err_size_zero(x_ptr):
    spec = tlx.storage_alias_spec(buffer_size_bytes=0)  # @err


@gluon.jit
def _err_size_runtime(x_ptr, n):
    spec = tlx.storage_alias_spec(buffer_size_bytes=n)  # @err


@gluon.jit
def _err_storage_mismatch(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    a = tlx.local_alloc((64, 64), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)  # @err


@gluon.jit
def _err_other_spec(x_ptr):
    s0 = tlx.storage_alias_spec()
    s1 = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=s0)
    b = tlx.local_alloc((64, 64), gl.float16, 2, reuse=s1)
    s0.set_buffer_overlap(tlx.reuse_group(a, b))  # @err


@gluon.jit
def _err_leaf_twice(x_ptr):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    g = tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct)
    spec.set_buffer_overlap(tlx.reuse_group(a, g))  # @err


@gluon.jit
def _overlap_again(spec, a):
    spec.set_buffer_overlap(tlx.reuse_group(a))  # @err


@gluon.jit
def _err_duplicate_overlap(x_ptr):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a))
    _overlap_again(spec, a)


@gluon.jit
def _err_group_size(x_ptr):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, group_size=0))  # @err


@gluon.jit
def _err_indexed_leaf(x_ptr):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a.index(0)))  # @err


@gluon.jit
def _err_legacy_smem_small(x_ptr):
    a = tlx.local_alloc((64, 64), gl.float16, 2)
    b = tlx.local_alloc((64, 64), gl.float32, 2, reuse=a)  # @err


@gluon.jit
def _err_legacy_tmem_small(x_ptr):
    t = tlx.local_alloc((128, 64), gl.bfloat16, 2, tlx.storage_kind.tmem)
    u = tlx.local_alloc((128, 64), gl.float32, 2, tlx.storage_kind.tmem, reuse=t)  # @err


@gluon.jit
def _err_legacy_storage(x_ptr):
    a = tlx.local_alloc((64, 64), gl.float16, 2)
    t = tlx.local_alloc((128, 32), gl.float32, 1, tlx.storage_kind.tmem, reuse=a)  # @err


@gluon.jit
def _err_legacy_view(x_ptr):
    a = tlx.local_alloc((64, 64), gl.float16, 2)
    b = tlx.local_alloc((64, 64), gl.float16, 1, reuse=a.index(0))  # @err
    b._keep_alive()


@gluon.jit
def _err_constexpr_spec_helper(x_ptr):
    spec: gl.constexpr = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    qk = _ring(spec)
    other = _ring(spec)
    _touch_tmem(qk, 64, gl.float32)
    _touch_tmem(other, 64, gl.float32)


def test_constexpr_spec_reaching_an_allocating_helper():
    """Triton < 3.8 traces a helper once per constexpr value, so two calls would share one allocation: an
    error at the helper's line. 3.8 and later trace each call: two allocations, as with a plain variable."""
    if compat.VERSION < (3, 8):
        with pytest.raises(CompilationError) as info:
            compile_ttgir(_err_constexpr_spec_helper, BLACKWELL)
        err = info.value
        while not isinstance(err, TlxAliasError):
            err = err.__cause__
        assert "gl.constexpr storage_alias_spec reached a @gluon.jit helper" in err.problem
        assert err.src == src_of(_ring, "# @err")
    else:
        found = allocs(compile_ttgir(_err_constexpr_spec_helper, BLACKWELL))
        assert sorted(v["tlx.alloc"] for v in found.values()) == ["a0", "a1"]


@gluon.jit
def _err_tmem_rows(x_ptr):
    t = tlx.local_alloc((32, 64), gl.float32, 1, tlx.storage_kind.tmem)  # @err


@gluon.jit
def _err_tmem_scales(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    s = tlx.local_alloc((128, 4), gl.uint8, 2, tlx.storage_kind.tmem, reuse=spec,  # @err
                        layout=TensorMemoryScalesLayout())


@gluon.jit
def _err_overlap_in_runtime_if(x_ptr, n):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    if n > 0:
        spec.set_buffer_overlap(tlx.reuse_group(a))  # @err


@gluon.jit
def _err_overlap_in_loop(x_ptr, n):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    for i in range(n):
        spec.set_buffer_overlap(tlx.reuse_group(a))  # @err


ERRORS = [
    (_err_cluster, "smemCluster is not supported", "storage_kind.smem or tlx.storage_kind.tmem"),
    (_err_size_zero, "buffer_size_bytes must be positive", "region size in bytes"),
    (_err_size_runtime, "must be a compile-time integer", "gl.constexpr"),
    (_err_storage_mismatch, "does not match spec0's storage storage_kind.tmem", "spec's storage kind"),
    (_err_other_spec, "belongs to spec1, the group's other elements to spec0", "one storage_alias_spec"),
    (_err_leaf_twice, "'a (a0)' (allocated at", "list each allocation once"),
    (_err_duplicate_overlap, "already called for this spec at", "once per storage_alias_spec"),
    (_err_group_size, "group_size must be a positive compile-time integer, got 0", "K >= 1"),
    (_err_indexed_leaf, "element 0 is not an allocation made by tlx.local_alloc", "not an .index() view"),
    (_err_legacy_smem_small, "needs 32768 bytes but the reused buffer [2, 64, 64] fp16 has 16384", "reduce num"),
    (_err_legacy_tmem_small, "needs 128 32-bit TMEM columns but the reused buffer [2, 128, 64] bf16 has 64",
     "storage_alias_spec"),
    (_err_legacy_storage, "does not match the reused descriptor, which lives in smem", "storage=tlx.storage_kind.smem"),
    # a view's op has no use Gluon keeps: it was removed, the alias dropped, the kernel compiled with false warnings
    (_err_legacy_view, "not an allocation of this kernel (the result of ttg.memdesc_index)", "not a view"),
    (_err_tmem_rows, "a multiple of 64 rows", "M = 64, 128"),
    (_err_tmem_scales, "refuses a multi-buffered scales descriptor", "allocate_tensor_memory outside"),
    (_err_overlap_in_runtime_if, "under runtime control flow", "where the spec is created"),
    (_err_overlap_in_loop, "under runtime control flow", "gl.static_range"),
]


@gluon.jit
def _overlap_in_constexpr_branches(x_ptr, DISTINCT: gl.constexpr):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    if DISTINCT:
        spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    else:
        spec.set_buffer_overlap(tlx.reuse_group(a, b))
    for i in gl.static_range(1):
        a._keep_alive()
    b._keep_alive()


@pytest.mark.parametrize("distinct", [True, False])
def test_overlap_under_constexpr_control_flow_is_fine(distinct):
    tree = facts(compile_ttgir(_overlap_in_constexpr_branches, HOPPER, {"DISTINCT": distinct}))[0]["spec0"]["tree"]
    assert tree["kind"] == ("distinct" if distinct else "shared") and tree["children"] == ["a0", "a1"]


@gluon.jit
def _implicit_tree(x_ptr):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    c = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    inner = tlx.reuse_group(b, c)  # @inner
    tlx.reuse_group(a, inner, group_type=tlx.reuse_group_type.distinct)  # @root
    a._keep_alive()
    b._keep_alive()
    c._keep_alive()


def test_a_reuse_group_tree_is_recorded_without_set_buffer_overlap():
    """Seed 000's future work: the tree built over a spec's allocations is its layout; the groups it
    contains are not separate candidates."""
    spec = facts(compile_ttgir(_implicit_tree, HOPPER))[0]["spec0"]
    assert spec["tree"] is None and list(spec["implicit"].values()) == [{
        "kind": "distinct", "group_size": 1, "src": src_of(_implicit_tree, "# @root"), "children": [
            "a0", {"kind": "shared", "group_size": 1, "src": src_of(_implicit_tree, "# @inner"),
                   "children": ["a1", "a2"]}]}]


@pytest.mark.parametrize("kernel, problem, fix", ERRORS, ids=[k.__name__ for k, _, _ in ERRORS])
def test_trace_time_errors_name_the_kernel_line(kernel, problem, fix):
    where = {_err_duplicate_overlap: _overlap_again}.get(kernel, kernel)
    sig = {"x_ptr": "*fp32", "n": "i32"} if "n" in kernel.arg_names else None
    with pytest.raises(CompilationError) as info:
        compile_ttgir(kernel, BLACKWELL, signature=sig)
    chain = [info.value]  # Triton wraps a builtin's error, then once more per helper level (`from e`)
    while not isinstance(chain[-1], TlxAliasError):
        assert chain[-1].__cause__ is not None, str(info.value)
        chain.append(chain[-1].__cause__)
    err = chain[-1]
    assert problem in err.problem and fix in err.fix
    assert err.src == src_of(where, "# @err")
    # What the user sees: the innermost CompilationError shows Triton's source excerpt plus our
    # problem, fix and absolute kernel line (outer ones, for helpers, show the call sites).
    shown = str(chain[-2])
    assert isinstance(chain[-2], CompilationError)
    assert err.problem in shown and err.fix in shown and err.src in shown


@gluon.jit
def _pick_whole_descriptor(x_ptr, n):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    first = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)  # @first
    second = tlx.local_alloc((64, 64), gl.float32, 2, tlx.storage_kind.smem, reuse=spec)  # @second
    spec.set_buffer_overlap(tlx.reuse_group(first, second, group_type=tlx.reuse_group_type.distinct))
    if n > 0:
        chosen = first
    else:
        chosen = second
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    gl.store(x_ptr + gl.arange(0, 64, layout=gl.SliceLayout(1, layout)),
             gl.sum(chosen.index(n % 2).load(layout), axis=1))


def test_a_branch_between_two_whole_aliased_descriptors_names_both_allocations():
    """Gluon refuses to merge two allocations of one shape (their types differ by the allocation record): its
    error names each side's type, which printed the same twice; it names each allocation and the way out."""
    with pytest.raises(CompilationError) as info:
        compile_ttgir(_pick_whole_descriptor, HOPPER, signature={"x_ptr": "*fp32", "n": "i32"})
    text = str(info.value)
    assert "Mismatched type for chosen" in text, text
    for name, marker in (("first", "# @first"), ("second", "# @second")):
        assert f"of '{name} (a" in text and f"allocated at {src_of(_pick_whole_descriptor, marker)}" in text, text
    assert "select one buffer with .index(i) before a branch or loop merges it" in text, text


@gluon.jit
def _spec_maker(x_ptr):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    a._keep_alive()


@gluon.jit
def _err_foreign_spec(x_ptr, SPEC: gl.constexpr, OWN: gl.constexpr):
    if OWN:   # a spec of its own, whose id is the foreign one's too: spec0
        mine = tlx.storage_alias_spec()
        b = tlx.local_alloc((64, 64), gl.float16, 2, reuse=mine)
        b._keep_alive()
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=SPEC)  # @err
    a._keep_alive()


@pytest.mark.parametrize("own", [False, True])
def test_a_spec_from_another_kernels_compile_is_refused(monkeypatch, own):
    """Spec ids are per compile (spec0, spec1, ...): a spec object smuggled into another kernel (here as a
    constexpr) raised a bare KeyError, or, where that kernel has a spec0 of its own, silently joined it."""
    made, init = [], tlx.storage_alias_spec.__init__

    @functools.wraps(init)   # (Triton passes _semantic / _generator by the signature it finds)
    def keep(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(tlx.storage_alias_spec, "__init__", keep)
    compile_ttgir(_spec_maker, HOPPER)
    with pytest.raises(CompilationError) as info:
        compile_ttgir(_err_foreign_spec, HOPPER, {"SPEC": made[0], "OWN": own})
    err = info.value
    while not isinstance(err, TlxAliasError):
        err = err.__cause__
    assert "belongs to another kernel's compile" in err.problem and src_of(_spec_maker, "spec = ") in err.problem
    assert err.src == src_of(_err_foreign_spec, "# @err")


def test_outside_a_kernel_is_an_error():
    with pytest.raises(TlxAliasError, match="outside a @gluon.jit"):
        tlx.storage_alias_spec()
    with pytest.raises(ValueError, match="forget"):
        tlx.local_alloc((64, 64), gl.float16, 1)


def test_enums_and_exports():
    assert set(tlx.__all__) >= {"storage_kind", "reuse_group_type", "storage_alias_spec", "local_alloc",
                                "reuse_group"}
    assert repr(tlx.storage_kind.tmem) == "storage_kind.tmem"
    assert f"{tlx.reuse_group_type.distinct}" == "reuse_group_type.distinct"


@gluon.jit
def _cluster_spec(x_ptr):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)  # @err
    a = tlx.local_alloc((64, 64), gl.float16, 2, reuse=spec)
    a._keep_alive()


@gluon.jit
def _cluster_legacy_reuse(x_ptr):
    a = tlx.local_alloc((64, 64), gl.float16, 2)
    b = tlx.local_alloc((64, 64), gl.float16, 2, reuse=a)  # @err
    b._keep_alive()


@pytest.mark.parametrize("kernel", [_cluster_spec, _cluster_legacy_reuse], ids=lambda k: k.__name__)
def test_storage_aliasing_in_a_cluster_of_ctas_is_an_error(kernel):
    """num_ctas > 1: the lowering's backing allocation has no CTA layout (Triton 3.9 could not parse the lowered
    module: a BridgeError) and the proof follows one CTA. Refused at the call, naming the option."""
    src = GluonASTSource(kernel, {"x_ptr": "*fp32"}, {})
    with pytest.raises(CompilationError) as info:
        triton.compile(src, target=GPUTarget("cuda", HOPPER, 32), options={"num_ctas": 2})
    err = info.value
    while not isinstance(err, TlxAliasError):
        err = err.__cause__
    assert "num_ctas=2" in err.problem and "num_ctas=1" in err.fix
    assert err.src == src_of(kernel, "# @err")
