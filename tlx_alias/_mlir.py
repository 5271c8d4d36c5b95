"""The one place that imports the upstream MLIR Python bindings.

Prefers a real `mlir` package, then `torch_mlir` (the default dependency), then
`jaxlib.mlir` (present on the GPU machines). Everything else imports `ir` and
`passmanager` from here so the provider can change without touching passes.
"""

import functools
import importlib

_PROVIDERS = ("mlir", "torch_mlir", "jaxlib.mlir")


def _load():
    errors = []
    for root in _PROVIDERS:
        try:
            ir_mod = importlib.import_module(f"{root}.ir")
            pm_mod = importlib.import_module(f"{root}.passmanager")
        except ImportError as exc:  # try the next provider
            errors.append(f"{root}: {exc}")
            continue
        if not hasattr(pm_mod.PassManager, "add"):
            errors.append(f"{root}: PassManager.add (Python passes) missing")
            continue
        return root, ir_mod, pm_mod
    raise ImportError(
        "tlx-alias needs the upstream MLIR Python bindings; install `torch-mlir==20261001` "
        "(or provide `mlir` / `jaxlib.mlir`). Tried: " + "; ".join(errors))


PROVIDER, ir, passmanager = _load()


def new_context():
    """A context in which every dialect is unregistered, so Triton's IR round-trips verbatim.

    The bindings' `Context` loads every upstream dialect they were built with; their versions of arith,
    scf, gpu ... are newer than Triton's and would re-print ops with properties Triton cannot parse
    (e.g. `gpu.barrier` gains `scope`). The native base class, without the site initializer, registers nothing.
    """
    bare = next((c for c in ir.Context.__mro__[1:] if c.__module__.endswith("_mlir.ir")), ir.Context)
    ctx = bare()
    ctx.allow_unregistered_dialects = True
    return ctx


def terminator(block):
    """The last op of `block` (its terminator) as an Operation, None for an empty block. `list(block.operations)`
    wraps every op of the block in a Python object first: 20-370 us for a block of a GEMM's lowered IR, where the
    index wraps one op (2-3 us)."""
    ops = block.operations
    n = len(ops)
    if not n:
        return None
    op = ops[n - 1]
    return getattr(op, "operation", op)


def per_type(seen: dict, t, compute):
    """`compute(str(t))`, remembered in `seen` by the type object: printing a type costs more than hashing it.
    Keep `seen` no longer than the IR it serves (a type keeps its context alive); bindings whose types are not
    hashable get no memo."""
    try:
        return seen[t]
    except KeyError:
        out = seen[t] = compute(str(t))
        return out
    except TypeError:
        return compute(str(t))


def to_attr(value):
    """A builtin attribute for a Python value, in the current context: int -> i64, str -> string,
    list/tuple of ints -> array<i64>, dict -> a dictionary of those (what tlx attributes are made of)."""
    if isinstance(value, bool) or not isinstance(value, (int, str, list, tuple, dict)):
        raise TypeError(f"no builtin attribute for {value!r}")
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, dict):
        return ir.DictAttr.get({k: to_attr(v) for k, v in value.items()})
    return ir.DenseI64ArrayAttr.get([int(v) for v in value])


def from_attr(attr):
    """The Python value of an attribute `to_attr` makes; ValueError for any other kind of attribute."""
    for kind, read in ((ir.IntegerAttr, lambda a: a.value), (ir.StringAttr, lambda a: a.value),
                       (ir.DenseI64ArrayAttr, list),
                       (ir.DictAttr, lambda a: {a[k].name: from_attr(a[k].attr) for k in range(len(a))})):
        try:
            typed = kind(attr)     # the bindings' cast: ValueError when the attribute is of another kind
        except ValueError:
            continue
        return read(typed)
    raise ValueError(f"not an integer, string, array<i64> or dictionary attribute: {attr}")


@functools.lru_cache(maxsize=None)
def _text_context():
    return new_context()


def attr_text(value) -> str:
    """The MLIR text of `to_attr(value)`, for tools that write IR as text."""
    with _text_context():
        return str(to_attr(value))


def attr_value(text: str):
    """The Python value (`from_attr`) of an attribute written as MLIR text, read by the MLIR parser."""
    with _text_context():
        return from_attr(ir.Attribute.parse(text))
