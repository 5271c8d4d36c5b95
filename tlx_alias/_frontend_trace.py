"""Gluon/Triton 3.6 internals the frontend leans on, kept in one place.

- Per-trace state lives on the `ir.module` being built: every CodeGenerator of one compile (kernel,
  inlined helpers, warp-specialize partitions) shares that Python object, and it dies with the compile.
- The user's source line comes from the CodeGenerator (`_generator`), which Triton hands to builtins
  that declare the parameter: `file_name`, `begin_line` and `cur_node` (the `Call` being visited).
- Frontend objects (specs, reuse groups) are IR-less `base_value`s: their type flattens to no IR
  values and unflattens to the same Python object, so they cross helper calls and control-flow
  regions by reference.
- An aliased allocation is an ordinary Gluon descriptor whose `type` is a tagged subclass carrying the
  allocation record. Types are what Triton uses to rebuild values after a call boundary (block
  arguments, call results, region clones), so the record survives where `handle` identity does not.
- The descriptor itself is of a subclass (rebuilt with its type) whose view methods (`slice`, `permute`,
  `reshape`, `_reinterpret` / `reinterpret`) refuse the whole `[num, *shape]` descriptor: its buffers are
  addressed per index, and Triton 3.6-3.9 abort the whole process (an assertion in
  `combineCtaCgaWithShape`) on `permute` / `reshape` of such a 3-D shared memory descriptor, 3.6-3.8 on
  `slice` along the buffer dimension, 3.6 on `slice` along the last one.
"""

from __future__ import annotations

import json
import re

from triton.experimental.gluon.language._core import (base_type, builtin, shared_memory_descriptor,
                                                     shared_memory_descriptor_type)
from triton.experimental.gluon.language.nvidia.blackwell import tensor_memory_descriptor, tensor_memory_descriptor_type

from tlx_alias.errors import TlxAliasError


# ----------------------------------------------------------------------------- trace state and source


FACTS_ATTR = "tlx.specs"


class Trace:
    """Per-compile state: ids unique within the kernel, and the facts of every spec (Contract 1).

    The facts go on the module as the attribute `tlx.specs` (JSON), rewritten after every change: the
    module op outlives Gluon's dead-code removal, so a spec whose allocations are all unused still reaches
    the lowering (and its diagnostics).
    """

    def __init__(self):
        self.specs = 0
        self.allocs = 0
        self.groups = 0
        self.facts: dict = {}

    def next_spec(self) -> str:
        self.specs += 1
        return f"spec{self.specs - 1}"

    def next_alloc(self) -> str:
        self.allocs += 1
        return f"a{self.allocs - 1}"

    def next_group(self) -> str:
        self.groups += 1
        return f"g{self.groups - 1}"

    def publish(self, generator, builder) -> None:
        text = json.dumps(self.facts, separators=(",", ":"))
        generator.module.set_attr(FACTS_ATTR, builder.get_string_attr(text))


def trace(generator) -> Trace:
    module = generator.module
    state = getattr(module, "_tlx_alias_trace", None)
    if state is None:
        state = Trace()
        module._tlx_alias_trace = state
    return state


def require_generator(api: str, generator):
    if generator is None:
        raise TlxAliasError(api, "called outside a @gluon.jit function",
                            "call it inside a kernel or a @gluon.jit helper", None)


def src_of(generator) -> str:
    """`path/to/file.py:LINE` of the call being traced (absolute line in the user's file)."""
    node = generator.cur_node
    return f"{generator.file_name}:{generator.begin_line + getattr(node, 'lineno', 1)}"


_ASSIGN = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*$")


def assigned_name(generator) -> str | None:
    """Best effort: `x` in `x = tlx.local_alloc(...)` (the call starts the right-hand side)."""
    node = generator.cur_node
    try:
        line = generator.jit_fn.src.split("\n")[node.lineno - 1]
    except (AttributeError, IndexError):
        return None
    match = _ASSIGN.match(line[:node.col_offset])
    return match.group(1) if match else None


# ----------------------------------------------------------------------------- IR-less values


class opaque_type(base_type):
    """Type of a frontend object with no IR: flattens to nothing, unflattens to the object itself.

    The mangled name is fresh on every call that passes the object: Triton traces a helper once per
    mangled signature and reuses that trace, so a helper called twice with one spec would otherwise
    yield the same allocation ops (and ids) twice after inlining. Such helpers are traced per call.
    """

    def __init__(self, value, tag: str):
        self.value = value
        self.tag = tag
        self.calls = 0

    def _flatten_ir_types(self, builder, out) -> None:
        return None

    def _unflatten_ir(self, handles, cursor):
        return self.value, cursor

    def mangle(self) -> str:
        self.calls += 1
        return f"{self.tag}C{self.calls}"

    def __eq__(self, other) -> bool:
        return isinstance(other, opaque_type) and self.value is other.value

    def __hash__(self):
        return id(self.value)

    def __str__(self) -> str:
        return self.tag


# ----------------------------------------------------------------------------- tagged descriptor types


class _Tagged:
    """Mixin over a Gluon descriptor type: same IR type, plus `_tlx` (the allocation record)."""

    _tlx = None

    def _unflatten_ir(self, handles, cursor):
        value, cursor = super()._unflatten_ir(handles, cursor)
        value.type = self
        value.__class__ = _ALIASED[self._plain]
        return value, cursor

    def mangle(self) -> str:
        # Helpers specialise per allocation, so their argument / result types keep the right record.
        return f"{super().mangle()}TLX{self._tlx.id}"

    def __eq__(self, other) -> bool:
        return (isinstance(other, self._plain) and getattr(other, "_tlx", None) is self._tlx
                and self.element_ty == other.element_ty and self.shape == other.shape
                and self.layout == other.layout and self.alloc_shape == other.alloc_shape)

    __hash__ = None

    def __str__(self) -> str:
        # Gluon names types in its errors ("Mismatched type for d between then block (...) and else block
        # (...)"): two allocations of one shape differ only by the allocation, so say which
        return (f"{super().__str__()} of '{self._tlx.label}' (allocated at {self._tlx.src} with reuse=: select "
                f"one buffer with .index(i) before a branch or loop merges it with another descriptor)")


class tagged_smem_type(_Tagged, shared_memory_descriptor_type):
    _plain = shared_memory_descriptor_type


class tagged_tmem_type(_Tagged, tensor_memory_descriptor_type):
    _plain = tensor_memory_descriptor_type


# ----------------------------------------------------------------------------- views of the whole descriptor

VIEW_METHODS = ("slice", "permute", "reshape", "_reinterpret", "reinterpret")


def _refuse_view(name):
    """A builtin that replaces descriptor method `name` on aliased descriptors with a TlxAliasError."""

    def method(self, *args, _semantic=None, _generator=None, **kwargs):
        record = self.type._tlx
        var = record.name or "buf"
        raise TlxAliasError(f"{var}.{name}", f".{name}() of '{record.label}' (allocated at {record.src}), the whole "
                            f"multi-buffer descriptor {list(self.shape)} of a storage_alias_spec: aliased buffers "
                            "are addressed one index at a time (and Triton aborts the process on some of these "
                            "views of a multi-buffer shared memory descriptor)",
                            f"select one buffer first: {var}.index(i).{name}(...)",
                            src_of(_generator) if _generator is not None else None)

    method.__name__ = method.__qualname__ = name
    return builtin(method)


def _aliased_class(base):
    methods = {name: _refuse_view(name) for name in VIEW_METHODS if hasattr(base, name)}
    return type(f"aliased_{base.__name__}", (base, ), dict(methods, __doc__="An allocation of a "
                "storage_alias_spec: a plain Gluon descriptor whose whole-descriptor views are refused."))


_ALIASED = {shared_memory_descriptor_type: _aliased_class(shared_memory_descriptor),
            tensor_memory_descriptor_type: _aliased_class(tensor_memory_descriptor)}


def tag_descriptor(desc, record):
    """Attach `record` to `desc` through its type, and refuse views of the whole multi-buffer descriptor."""
    cls = tagged_smem_type if isinstance(desc.type, shared_memory_descriptor_type) else tagged_tmem_type
    ty = cls.__new__(cls)
    ty.__dict__.update(desc.type.__dict__)
    ty._tlx = record
    desc.type = ty
    desc.__class__ = _ALIASED[cls._plain]
    return desc


def record_of(value):
    """The allocation record of a descriptor returned by `local_alloc(reuse=spec)`, else None."""
    return getattr(getattr(value, "type", None), "_tlx", None)
