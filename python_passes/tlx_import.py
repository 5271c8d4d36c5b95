"""tlx-import: turn the frontend's tagged allocations into the tlx ops of seed 000.

Precondition: allocations (`ttg.local_alloc` / `ttng.tmem_alloc`) tagged by `tlx_alias.language`
(ARCHITECTURE.md, contract 1). Rewrite, per spec id:
  one `tlx.storage_alias_spec` before the spec's first allocation;
  each tagged allocation -> `tlx.storage_alias_local_alloc %spec` of the same type;
  the recorded reuse tree -> `tlx.reuse_group` ops and one `tlx.set_buffer_overlap %spec, %root`,
  placed after the spec's last allocation.
A tree leaf that Gluon removed before this pass (an unused allocation) is dropped with a warning.
"""

from __future__ import annotations

import json

from tlx_alias._mlir import ir

from ._ir import PassContext, fail, int_attr, set_int, set_str, str_attr, walk

NAME = "tlx-import"
ALLOC_OPS = ("ttg.local_alloc", "ttng.tmem_alloc")
_COPY = ("tlx.alloc", "tlx.src", "tlx.name", "tlx.spec", "tlx.overlap", "tlx.overlap_src")


def spec_type(storage: str, size: int | None):
    return ir.Type.parse(f"!tlx.storage_alias_spec<{storage}{'' if size is None else f', {size}'}>")


def _create(name, results, operands, loc, ip, attrs=None):
    op = ir.Operation.create(name, results=results, operands=operands, loc=loc, ip=ip)
    for k, v in (attrs or {}).items():
        if isinstance(v, str):
            set_str(op, k, v)
        elif v is not None:
            set_int(op, k, v)
    return op


def _build_group(node, by_id, ip, loc, created):
    """Create reuse_group ops bottom-up; returns the group's value, or None if it lost every leaf."""
    if isinstance(node, str):
        return by_id.get(node)
    elems = [v for v in (_build_group(c, by_id, ip, loc, created) for c in node["children"]) if v is not None]
    if not elems:
        return None
    kind = node["kind"]
    op = _create("tlx.reuse_group", [ir.Type.parse(f"!tlx.reuse_group<{kind}>")], elems, loc, ip,
                 {"group_kind": kind, "group_size": node.get("group_size", 1), "tlx.src": node.get("src")})
    created.append(op)
    return op.result


def _leaf_ids(node):
    if isinstance(node, str):
        yield node
    else:
        for c in node["children"]:
            yield from _leaf_ids(c)


def run(module, ctx: PassContext):
    specs: dict[str, list] = {}
    for op in walk(module):
        if "tlx.spec" not in op.attributes:
            continue
        if op.name not in ALLOC_OPS:  # local_alloc(reuse=<descriptor>) tagged the op behind that descriptor
            fail(op, NAME, f"the buffer reused at {str_attr(op, 'tlx.src')} is the result of '{op.name}', "
                           "not an allocation", "pass reuse=<the descriptor an allocation returned>, or declare "
                           "the sharing with a storage_alias_spec")
        specs.setdefault(str_attr(op, "tlx.spec"), []).append(op)
    all_ids = {}
    for sid, ops in specs.items():
        for op in ops:
            aid = str_attr(op, "tlx.alloc")
            if aid in all_ids:
                fail(op, NAME, f"allocation {aid} was traced once and instantiated twice (a @gluon.jit helper "
                               "reused for two call sites)",
                     "pass the storage_alias_spec into the helper that allocates from it, so each call is traced")
            all_ids[aid] = sid

    for sid, allocs in specs.items():
        first = allocs[0]
        parent = first.parent
        for op in allocs[1:]:
            if op.parent != parent:
                fail(op, NAME, "allocations of one storage_alias_spec are in different regions",
                     "allocate every buffer of a spec at the same nesting level (e.g. at the top of the kernel)")
        storage = str_attr(first, "tlx.spec_storage")
        size = int_attr(first, "tlx.spec_size")
        spec = _create("tlx.storage_alias_spec", [spec_type(storage, size)], [], first.location,
                       ir.InsertionPoint(first),
                       {"storage": storage, "buffer_size_bytes": size, "tlx.spec": sid,
                        "tlx.src": str_attr(first, "tlx.spec_src")})
        by_id, trees = {}, {}
        for op in allocs:
            new = _create("tlx.storage_alias_local_alloc", [op.result.type], [spec.result], op.location,
                          ir.InsertionPoint(op), {k: str_attr(op, k) for k in _COPY})
            op.result.replace_all_uses_with(new.result)
            by_id[str_attr(op, "tlx.alloc")] = new.result
            if "tlx.overlap" in op.attributes:
                trees.setdefault(str_attr(op, "tlx.overlap"), (str_attr(op, "tlx.overlap_src"),
                                                               str_attr(op, "tlx.overlap_leaves")))
            op.erase()
            last = new
        for text, (src, leaves) in trees.items():
            tree = json.loads(text)
            names = json.loads(leaves) if leaves else {}  # leaf id -> [label, src] (frontend records)
            for leaf in _leaf_ids(tree):
                if leaf not in all_ids:
                    label, leaf_src = names.get(leaf, (leaf, None))
                    ctx.warnings.append((leaf_src or src, f"[{NAME}] buffer '{label}' of the reuse tree is never "
                                                          "used, so Gluon removed it before lowering; no space is "
                                                          "reserved for it"))
                elif all_ids[leaf] != sid:
                    fail(last, "set_buffer_overlap", f"buffer {leaf} belongs to another storage_alias_spec",
                         "only put allocations made with reuse=<this spec> in its reuse groups", src)
            # Tree ops go right after the spec's last allocation: create them before it, then
            # move that allocation above the first of them.
            created = []
            ip = ir.InsertionPoint(last)
            root = _build_group(tree, by_id, ip, last.location, created)
            if root is None:
                continue
            created.append(_create("tlx.set_buffer_overlap", [], [spec.result, root], last.location, ip,
                                   {"tlx.src": src}))
            last.move_before(created[0])
