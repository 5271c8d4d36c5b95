"""TLX storage aliasing for Gluon kernels: `import tlx_alias.language as tlx`.

Inside `@gluon.jit` code (seed 000):

    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)
    qk = tlx.local_alloc((128, 128), gl.float32, 2, tlx.storage_kind.tmem, reuse=spec)
    p = tlx.local_alloc((128, 64), gl.bfloat16, 4, tlx.storage_kind.tmem, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(qk, tlx.reuse_group(p, group_size=2)))

Everything here runs at trace time. `local_alloc` returns ordinary Gluon memory descriptors; with
`reuse=spec` the allocation op carries the Contract-1 attributes (docs/ARCHITECTURE.md) that the
lowering passes read; `reuse=<descriptor>` (legacy TLX, deprecated) makes that descriptor and the new
buffers members of one spec without a reuse tree (all at offset 0). Mistakes raise `TlxAliasError`
naming the kernel line (`file.py:LINE`).
"""

from __future__ import annotations

import enum

from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language._core import _unwrap_if_constexpr, base_value, builtin
from triton.experimental.gluon.language._layouts import SharedLayout
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, TensorMemoryScalesLayout,
                                                                 allocate_tensor_memory, tensor_memory_descriptor)

from tlx_alias._frontend_trace import (assigned_name, opaque_type, record_of, require_generator, src_of,
                                       tag_descriptor, trace)
from tlx_alias import _triton as compat
from tlx_alias import targets
from tlx_alias.errors import TlxAliasError, warn_at
from tlx_alias.memdesc import parse_memdesc

__all__ = ["storage_kind", "reuse_group_type", "storage_alias_spec", "local_alloc", "reuse_group"]


class _KernelEnum(enum.IntEnum):
    """IntEnum so members reach @gluon.jit helpers as constexprs; repr names them in mangled symbols."""

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)


class storage_kind(_KernelEnum):
    """Where buffers live. `smemCluster` exists for TLX compatibility and is rejected by specs."""
    smem = 0
    tmem = 1
    smemCluster = 2


class reuse_group_type(_KernelEnum):
    """`shared`: children start at the same offset per buffer index; `distinct`: placed one after another."""
    shared = 0
    distinct = 1


# Triton lets kernels read a global only if it is constexpr or a builtin; this makes
# `from tlx_alias.language import storage_kind` usable like `tlx.storage_kind`.
storage_kind.__triton_builtin__ = True
reuse_group_type.__triton_builtin__ = True


_error = TlxAliasError  # (where, problem, fix, src)


def _int_constant(value):
    value = _unwrap_if_constexpr(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ----------------------------------------------------------------------------- storage_alias_spec


class storage_alias_spec(base_value):
    """A region that several allocations share as equal peers (no primary owner). Immutable.

    `buffer_size_bytes` is optional; without it the passes size the region from its users.
    """

    __triton_builtin__ = True  # constructible in kernels; Triton passes _semantic/_generator

    def __init__(self, storage=storage_kind.smem, buffer_size_bytes=None, _semantic=None, _generator=None):
        api = "tlx.storage_alias_spec"
        require_generator(api, _generator)
        src = src_of(_generator)
        storage = _unwrap_if_constexpr(storage)
        if storage is storage_kind.smemCluster:
            raise _error(api, "storage_kind.smemCluster is not supported for storage aliasing",
                         "use storage=tlx.storage_kind.smem or tlx.storage_kind.tmem", src)
        if not isinstance(storage, storage_kind):
            raise _error(api, f"storage must be a tlx.storage_kind, got {storage!r}",
                         "pass tlx.storage_kind.smem or tlx.storage_kind.tmem", src)
        _require_lowering(api, _semantic, src)
        _require_one_cta(api, _semantic, src)
        size = _unwrap_if_constexpr(buffer_size_bytes)
        if size is not None:
            if _int_constant(size) is None:
                raise _error(api, f"buffer_size_bytes must be a compile-time integer, got {size!r}",
                             "pass a Python int or a gl.constexpr, or omit it to let the compiler size the region",
                             src)
            if not 0 < size < 2**31:
                raise _error(api, f"buffer_size_bytes must be positive (and below 2**31), got {size}",
                             "pass the region size in bytes, or omit it", src)
        self._storage, self._size, self._src = storage, size, src
        self._trace = trace(_generator)   # the kernel's trace it belongs to (ids are per trace: spec0, ...)
        self._id = self._trace.next_spec()
        self._overlap_src = None
        self._legacy = False
        # where it was declared: set_buffer_overlap must run there (not under runtime control flow)
        self._home = (id(_generator), _semantic.builder.get_insertion_block().id())
        self.type = opaque_type(self, f"TLX{self._id}")
        trace(_generator).facts[self._id] = {"storage": storage.name, "size": size, "src": src, "members": {},
                                            "tree": None, "tree_src": None, "implicit": {}}
        trace(_generator).publish(_generator, _semantic.builder)

    storage = property(lambda self: self._storage, doc="The storage kind (smem or tmem).")
    buffer_size_bytes = property(lambda self: self._size, doc="The explicit size in bytes, or None.")
    id = property(lambda self: self._id, doc='Id unique in the kernel: "spec0", "spec1"...')

    def _flatten_ir(self, handles) -> None:
        return None

    def _set_name(self, builder, name) -> None:
        return None  # no IR value to name (Triton >= 3.8 names every assigned value)

    def __repr__(self):
        return f"storage_alias_spec({self._id}, {self._storage!r}, {self._size})"

    def _facts(self, generator) -> dict:
        state = trace(generator)
        if state is not self._trace:   # its id may name another spec of this kernel, or none
            raise _error(self._id, f"this storage_alias_spec (created at {self._src}) belongs to another kernel's "
                         "compile", "create the spec in the kernel that allocates from it (or in a @gluon.jit helper "
                         "it calls) and pass it down as an argument", src_of(generator))
        return state.facts[self._id]

    @builtin
    def set_buffer_overlap(self, overlap_def, _semantic=None, _generator=None):
        """Declare how this spec's allocations overlap: a reuse_group tree over them. At most once per spec,
        at trace time: constexpr branches and inlined helpers are fine, runtime `if`/`for` bodies are not."""
        api = f"{self._id}.set_buffer_overlap"
        src = src_of(_generator)
        if _generator.scf_stack or (id(_generator) == self._home[0] and
                                    _semantic.builder.get_insertion_block().id() != self._home[1]):
            raise _error(api, "set_buffer_overlap is under runtime control flow (a runtime `if` or a loop body); "
                         "it declares the layout at compile time, once", "call it where the spec is created "
                         "(a `gl.constexpr` condition or a `gl.static_range` loop is fine)", src)
        if self._overlap_src is not None:
            again = ("it is executed more than once (a helper called twice?)" if self._overlap_src == src
                     else f"it was already called for this spec at {self._overlap_src}")
            raise _error(api, f"set_buffer_overlap called again: {again}",
                         "call set_buffer_overlap once per storage_alias_spec, with one reuse_group tree", src)
        tree = _unwrap_if_constexpr(overlap_def)
        if not isinstance(tree, reuse_group):
            raise _error(api, f"expected a tlx.reuse_group, got {type(tree).__name__}",
                         "wrap the allocations in tlx.reuse_group(...)", src)
        if tree.spec is not self:
            owner = tree.spec
            raise _error(api, f"the tree's allocations belong to {owner.id} (created at {owner._src}), not to "
                         f"{self._id} (created at {self._src})",
                         f"only pass allocations made with reuse={self._id} to its set_buffer_overlap", src)
        facts = self._facts(_generator)
        facts["tree"], facts["tree_src"] = tree._json(), src
        trace(_generator).publish(_generator, _semantic.builder)
        self._overlap_src = src


# ----------------------------------------------------------------------------- reuse_group


class reuse_group(base_value):
    """A node of a spec's overlap tree; children are aliased allocations or nested groups (any kinds).

    `group_size=K` on a shared group treats K consecutive buffers as one logical group (sub-tiling). A tree
    built from reuse groups is the spec's layout even without set_buffer_overlap when it is the spec's
    only tree (seed 000, "Eliminating set_buffer_overlap").
    """

    __triton_builtin__ = True

    def __init__(self, *elems, group_type=reuse_group_type.shared, group_size=1, _semantic=None, _generator=None):
        api = "tlx.reuse_group"
        require_generator(api, _generator)
        src = src_of(_generator)
        kind = _unwrap_if_constexpr(group_type)
        if not isinstance(kind, reuse_group_type):
            raise _error(api, f"group_type must be a tlx.reuse_group_type, got {kind!r}",
                         "pass tlx.reuse_group_type.shared or tlx.reuse_group_type.distinct", src)
        size = _int_constant(group_size)
        if size is None or size <= 0:
            got = _unwrap_if_constexpr(group_size)
            raise _error(api, f"group_size must be a positive compile-time integer, got {got!r}",
                         "pass group_size=K with K >= 1 (K sub-tiles form one logical buffer)", src)
        if not elems:
            raise _error(api, "a reuse_group needs at least one element", "pass allocations or nested groups", src)
        children, seen, spec = [], {}, None
        for i, elem in enumerate(elems):
            elem = _unwrap_if_constexpr(elem)
            if isinstance(elem, reuse_group):
                leaves = list(elem._leaves())
            elif record_of(elem) is not None:
                leaves = [record_of(elem)]
            else:
                raise _error(api, f"element {i} is not an allocation made by tlx.local_alloc(..., reuse=spec) "
                             f"(got {elem})", "pass the descriptor returned by local_alloc(reuse=spec) itself, "
                             "not an .index() view or a plain allocation", src)
            for record in leaves:
                spec = spec or record.spec
                if record.spec is not spec:
                    raise _error(api, f"'{record.label}' (allocated at {record.src}) belongs to {record.spec.id}, "
                                 f"the group's other elements to {spec.id}",
                                 "put only allocations of one storage_alias_spec in a reuse tree", src)
                if record.id in seen:
                    raise _error(api, f"'{record.label}' (allocated at {record.src}) appears twice in the reuse tree",
                                 "list each allocation once; use group_size for sub-tiled buffers", src)
                seen[record.id] = record
            children.append(elem)
        self.children, self.group_type, self.group_size, self.src = tuple(children), kind, size, src
        self.spec = spec
        self._id = trace(_generator).next_group()
        self.type = opaque_type(self, f"TLX{self._id}")
        # the implicit tree: this group replaces the groups it contains as a root candidate of its spec
        implicit = spec._facts(_generator)["implicit"]
        for child in children:
            if isinstance(child, reuse_group):
                implicit.pop(child._id, None)
        implicit[self._id] = self._json()
        trace(_generator).publish(_generator, _semantic.builder)

    def _flatten_ir(self, handles) -> None:
        return None

    def _set_name(self, builder, name) -> None:
        return None  # no IR value to name (Triton >= 3.8 names every assigned value)

    def _leaves(self):
        for child in self.children:
            yield from child._leaves() if isinstance(child, reuse_group) else (record_of(child), )

    def _json(self):
        return {
            "kind": self.group_type.name, "group_size": self.group_size, "src": self.src, "children": [
                c._json() if isinstance(c, reuse_group) else record_of(c).id for c in self.children
            ]
        }


# ----------------------------------------------------------------------------- local_alloc


class _Alloc:
    """What the frontend knows of one aliased allocation (carried by its descriptor's type)."""

    def __init__(self, id, spec, src, handle, name):
        self.id, self.spec, self.src, self.handle, self.name = id, spec, src, handle, name

    @property
    def label(self):
        return f"{self.name} ({self.id})" if self.name else self.id


def _default_layout(storage, shape, dtype):
    """Layouts for `layout=None`.

    TMEM is packed (col_stride=1): 16-bit data takes two elements per 32-bit column. That is the
    seed's size rule (element size scaled to 32-bit columns), the form tcgen05 reads a TMEM operand
    in, and it halves P's footprint so P, alpha, l and m fit beside each other inside QK's columns.
    """
    if storage == storage_kind.tmem:
        return TensorMemoryLayout(block=(min(shape[0], 128), shape[1]), col_stride=1)
    if len(shape) >= 2:
        return gl.NVMMASharedLayout.get_default_for(list(shape), dtype)
    return gl.SwizzledSharedLayout(1, 1, 1, [0])


def _require_lowering(api, semantic, src):
    """The compile tracing this kernel must run tlx-alias's stages (its lowering and proof): a stages hook set
    after `import tlx_alias.language` that does not call the one it replaced, `knobs.runtime.scope()` ending,
    or `hook.uninstall()` leave Triton to compile the tagged allocations as plain ones, unshared and unproven."""
    if not _hook.lowers(compat.trace_options(semantic)):
        name = _hook.stages_hook_name()
        raise _error(api, "tlx-alias's lowering is not in this compile's pipeline: Triton's "
                     f"knobs.runtime.add_stages_inspection_hook is {name}"
                     f"{'' if name == 'None' else ', which did not call the tlx-alias hook it replaced'}: the kernel "
                     "would compile unshared and unproven",
                     "set your stages hook before importing tlx_alias.language (tlx-alias calls the hook it finds), "
                     "or call the previous hook from yours; tlx_alias.plugin.hook.install() puts tlx-alias back", src)


def _require_one_cta(api, semantic, src):
    """Storage aliasing is for kernels of one CTA per cluster: the backing allocation the lowering makes has no
    CTA layout (Triton 3.9 refuses it in a kernel of several), and the proof follows one CTA, not what the
    cluster's other CTAs write into its bytes (TMA multicast, arrives from other CTAs, two-CTA MMAs)."""
    n = compat.trace_num_ctas(semantic)
    if n > 1:
        raise _error(api, f"storage aliasing needs one CTA per cluster; this kernel is compiled with num_ctas={n}",
                     "compile it with num_ctas=1, or allocate its buffers without a storage_alias_spec or reuse=",
                     src)


@builtin
def local_alloc(shape, dtype, num, storage=storage_kind.smem, reuse=None, layout=None, _semantic=None,
                _generator=None):
    """Allocate `num` buffers of `shape` in SMEM or TMEM; returns a Gluon descriptor of `[num, *shape]`.

    reuse=None: a plain allocation. reuse=spec: an ordinary allocation tagged for the lowering
    (Contract 1). reuse=<descriptor>: legacy TLX, aliases that descriptor at offset 0 (see _legacy_spec).
    """
    api = "tlx.local_alloc"
    src = src_of(_generator)
    shape = [_unwrap_if_constexpr(s) for s in _unwrap_if_constexpr(shape)]
    dtype, n = _unwrap_if_constexpr(dtype), _int_constant(num)
    if isinstance(reuse, gl.constexpr) and isinstance(reuse.value, storage_alias_spec) and not _generator.is_kernel:
        # Triton traces a helper once per constexpr value and reuses that trace for later calls, so
        # every call would share these allocation ops (and ids). A plain spec variable is per call.
        raise _error(api, "a gl.constexpr storage_alias_spec reached a @gluon.jit helper that allocates from it",
                     "declare it as a plain variable (spec = tlx.storage_alias_spec(...)), not spec: gl.constexpr",
                     src)
    storage, reuse, layout = (_unwrap_if_constexpr(x) for x in (storage, reuse, layout))
    if reuse is not None:
        _require_lowering(api, _semantic, src)
        _require_one_cta(api, _semantic, src)
    if not shape or not all(_int_constant(s) and s > 0 for s in shape):
        raise _error(api, f"shape must be a non-empty tuple of positive compile-time ints, got {shape}",
                     "pass e.g. (BLOCK_M, BLOCK_N) with gl.constexpr values", src)
    if not isinstance(dtype, gl.dtype):
        raise _error(api, f"dtype must be a gl dtype, got {dtype!r}", "pass e.g. gl.float16", src)
    if n is None or n <= 0:
        raise _error(api, f"num must be a positive compile-time int, got {_unwrap_if_constexpr(num)!r}",
                     "pass the number of buffers as an int or gl.constexpr", src)
    if storage not in (storage_kind.smem, storage_kind.tmem) or not isinstance(storage, storage_kind):
        raise _error(api, f"storage must be tlx.storage_kind.smem or .tmem, got {storage!r}",
                     "pass tlx.storage_kind.smem or tlx.storage_kind.tmem", src)
    if storage == storage_kind.smem and any(s & (s - 1) for s in shape):
        # Gluon refuses such a shared memory shape (3.6-3.9), and Triton aborts the process on one that reaches
        # its layout code; the buffer count (the leading dimension of the descriptor) may be any size
        raise _error(api, f"an SMEM buffer's dimensions must be powers of two, got {shape}",
                     f"pad the tile to {[1 << (s - 1).bit_length() for s in shape]} or split it into power-of-two "
                     "tiles (the buffer count num may be any size)", src)
    capability = compat.trace_capability(_semantic)
    if storage == storage_kind.tmem and capability is not None and not targets.has_tmem(capability):
        # Triton 3.9 rejects the tmem_alloc itself ("requires tcgen05 support") with a bare RuntimeError
        raise _error(api, f"tensor memory does not exist on sm_{capability}, the target this kernel is compiled for",
                     "compile for sm_100a or later, or allocate in tlx.storage_kind.smem", src)
    if storage == storage_kind.tmem and (len(shape) != 2 or shape[0] % 64):
        raise _error(api, f"a TMEM buffer must be 2-D with a multiple of 64 rows, got {shape}",
                     "use shape (M, N) with M = 64, 128 or a CTA pair's 256 for tensor memory", src)
    if isinstance(layout, TensorMemoryScalesLayout):
        raise _error(api, "TMEM scale buffers (TensorMemoryScalesLayout) cannot be allocated here: every Triton "
                     "release from 3.6 to 3.9 refuses a multi-buffered scales descriptor, and local_alloc returns "
                     f"[num, {shape[0]}, {shape[1]}]", "allocate the scales with allocate_tensor_memory outside "
                     "the storage_alias_spec", src)
    if layout is None:
        layout = _default_layout(storage, shape, dtype)
    elif storage == storage_kind.tmem and not isinstance(layout, TensorMemoryLayout):
        raise _error(api, f"a TMEM allocation needs a TensorMemoryLayout, got {layout!r}",
                     "pass a TensorMemoryLayout or leave layout=None", src)
    elif storage == storage_kind.smem and not isinstance(layout, SharedLayout):
        raise _error(api, f"an SMEM allocation needs a shared layout, got {layout!r}",
                     "pass e.g. gl.NVMMASharedLayout(...) or leave layout=None", src)
    full = [n, *shape]

    legacy_base = None
    if isinstance(reuse, (gl.shared_memory_descriptor, tensor_memory_descriptor)):
        legacy_base, reuse = reuse, None
        if isinstance(legacy_base, tensor_memory_descriptor) != (storage == storage_kind.tmem):
            have = "tmem" if isinstance(legacy_base, tensor_memory_descriptor) else "smem"
            raise _error("tlx.local_alloc(reuse=<descriptor>)", f"storage {storage!r} does not match the reused "
                         f"descriptor, which lives in {have}", f"allocate with storage=tlx.storage_kind.{have}", src)
    if reuse is not None and not isinstance(reuse, storage_alias_spec):
        raise _error(api, f"reuse must be a tlx.storage_alias_spec or a descriptor, got {reuse!r}",
                     "pass reuse=spec (from tlx.storage_alias_spec) or omit it", src)
    if reuse is not None and reuse.storage != storage:
        raise _error(api, f"storage {storage!r} does not match {reuse.id}'s storage {reuse.storage!r} "
                     f"(spec created at {reuse._src})", "allocate in the spec's storage kind, or use another spec",
                     src)

    if storage == storage_kind.tmem:
        desc = allocate_tensor_memory(dtype, full, layout, _semantic=_semantic)
    else:
        desc = gl.allocate_shared_memory(dtype, full, layout, _semantic=_semantic)
    if legacy_base is not None:
        reuse = _legacy_spec(legacy_base, desc, storage, _semantic, _generator, src)
    if reuse is None:
        return desc
    return tag_descriptor(desc, _member(desc, reuse, src, assigned_name(_generator), _semantic, _generator))


def _member(desc, spec, src, name, _semantic, _generator):
    """Make `desc`'s allocation a member of `spec`: its op is tagged with the ids (`tlx.spec`, `tlx.alloc`), its
    facts (name, line, type) go into the spec's record on the module (Contract 1)."""
    state = trace(_generator)
    record = _Alloc(state.next_alloc(), spec, src, desc.handle, name)
    b = _semantic.builder
    desc.handle.set_attr("tlx.spec", b.get_string_attr(spec.id))
    desc.handle.set_attr("tlx.alloc", b.get_string_attr(record.id))
    spec._facts(_generator)["members"][record.id] = {"name": name, "src": src, "type": str(desc.handle.get_type())}
    state.publish(_generator, b)
    return record


def _legacy_spec(base, desc, storage, _semantic, _generator, src):
    """Legacy `reuse=<descriptor>`: the new buffers `desc` alias `base` at offset 0 (checked to fit).

    Lowered as a spec without a reuse tree whose members are `base` and every allocation that reuses it:
    one backing allocation, every view at offset 0, proven like any spec. Returns that (implicit) spec.
    """
    api = "tlx.local_alloc(reuse=<descriptor>)"
    new, old = (parse_memdesc(str(d.handle.get_type())) for d in (desc, base))
    unit = "32-bit TMEM columns" if storage == storage_kind.tmem else "bytes"
    if new.size > old.size or (storage == storage_kind.tmem and new.shape[-2] > old.shape[-2]):
        raise _error(api, f"{new.shape[0]} x {list(new.shape[1:])} {desc.dtype} needs {new.size} {unit} but the "
                     f"reused buffer {list(base.shape)} {base.dtype} has {old.size}", "reduce num or the shape, or "
                     "reuse a larger buffer (better: a tlx.storage_alias_spec, which sizes the region for you)", src)
    made_by = _defining_op(_generator, base)
    if made_by not in ("ttg.local_alloc", "ttng.tmem_alloc"):
        raise _error(api, f"the reused descriptor is not an allocation of this kernel ("
                     f"{'the result of ' + made_by if made_by else 'a loop-carried value or an argument'})",
                     "pass the descriptor an allocation returned (not a view: .index(), .slice(), a reinterpret), or "
                     "declare the sharing with a tlx.storage_alias_spec", src)
    record = record_of(base)
    if record is not None and not record.spec._legacy:
        raise _error(api, f"the reused buffer belongs to {record.spec.id} (created at {record.spec._src})",
                     f"allocate with reuse={record.spec.id} instead of reusing one of its buffers", src)
    warn_at(src, "local_alloc(reuse=<descriptor>) is TLX's legacy alias; declare the sharing instead: "
                 "spec = tlx.storage_alias_spec(storage=...), then local_alloc(..., reuse=spec) for the reused "
                 "buffer and for this one (offset 0 for both, as here)")
    if record is not None:
        return record.spec
    spec = storage_alias_spec(storage, _semantic=_semantic, _generator=_generator)
    spec._legacy = True
    tag_descriptor(base, _member(base, spec, src, None, _semantic, _generator))
    return spec


def _defining_op(generator, desc) -> str | None:
    """The name of the op whose result `desc` is, or None (a block argument). Triton's Python IR has no
    defining-op query: the module is walked, which only legacy `reuse=<descriptor>` pays for."""
    target, found = desc.handle.id(), []

    def visit(op):
        if not found and any(op.get_result(i).id() == target for i in range(op.get_num_results())):
            found.append(op.get_name())
    generator.module.walk(visit)
    return found[0] if found else None


# Importing the frontend switches the lowering plugin on for this process. If it cannot be installed the
# import fails here: a kernel that uses the API is never compiled without its lowering and proof.
from tlx_alias.plugin import hook as _hook  # noqa: E402

_hook.install()
