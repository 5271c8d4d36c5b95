"""tlx-import: turn the frontend's record of every spec into the tlx ops of seed 000.

Precondition: a module from `tlx_alias.language` (docs/ARCHITECTURE.md, contract 1): the module attribute
`tlx.specs` (JSON: per spec its storage, explicit size, line, members with name/line/type, and its reuse
tree — from set_buffer_overlap, or the one reuse_group tree built over its allocations), and the member
allocations (`ttg.local_alloc` / `ttng.tmem_alloc`) tagged `tlx.spec` / `tlx.alloc`. Rewrite, per spec:
  one `tlx.storage_alias_spec` before its first allocation (`tlx.overlap` on it: the tree as JSON);
  each member -> `tlx.storage_alias_local_alloc %spec` of the same type; a member Gluon removed because
  nothing uses it is recreated from its recorded type, tagged `tlx.dead`, so the layout keeps its place
  (a warning names it); the tree -> `tlx.reuse_group` ops and one `tlx.set_buffer_overlap`.
A spec whose every member was removed keeps its diagnostics and reserves nothing (a warning).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tlx_alias._mlir import ir
from tlx_alias.errors import TlxAliasError

from ._ir import ModulePass, PassContext, fail, set_int, set_str, src_of, str_attr, walk

ALLOC_OPS = ("ttg.local_alloc", "ttng.tmem_alloc")
FACTS_ATTR = "tlx.specs"


@dataclass(frozen=True)
class TlxImport(ModulePass):
    name = "tlx-import"

    def apply(self, module, ctx: PassContext) -> None:
        facts = spec_record(module)
        live = self._live_members(module, facts)
        for sid, spec in facts.items():
            self._import_spec(module, sid, spec, live, ctx)

    def _live_members(self, module, facts) -> dict:
        live = {}
        for op in walk(module):
            if "tlx.spec" not in op.attributes:
                continue
            if op.name not in ALLOC_OPS:  # local_alloc(reuse=<descriptor>) tagged the op behind that descriptor
                member = facts.get(str_attr(op, "tlx.spec"), {}).get("members", {}).get(str_attr(op, "tlx.alloc"))
                if member is None:
                    fail(op, self.name, f"'{op.name}' carries tlx.spec but is not an allocation the frontend recorded",
                         "run tlx-import once, on a module from tlx_alias.language")
                fail(op, self.name, f"the buffer reused at {member['src']} is the result of '{op.name}', not an "
                                    "allocation", "pass reuse=<the descriptor an allocation returned>, or declare "
                                    "the sharing with a storage_alias_spec", member["src"])
            aid = str_attr(op, "tlx.alloc")
            if str_attr(op, "tlx.spec") not in facts:
                fail(op, self.name, f"allocation {aid} is tagged for {str_attr(op, 'tlx.spec')} but the module has "
                                    f"no record of that spec (attribute {FACTS_ATTR})",
                     "allocate through tlx_alias.language (local_alloc(..., reuse=spec))")
            if aid in live:
                fail(op, self.name, f"allocation {aid} was traced once and instantiated twice (a @gluon.jit helper "
                                    "reused for two call sites)",
                     "pass the storage_alias_spec into the helper that allocates from it, so each call is traced")
            live[aid] = op
        return live

    def _import_spec(self, module, sid, spec, live, ctx):
        members = spec["members"]
        ops = [live[a] for a in members if a in live]
        for op in ops[1:]:
            if op.parent != ops[0].parent:
                inner = op if _depth(op) >= _depth(ops[0]) else ops[0]
                outer = inner.parent   # the op whose region holds it: the kernel's `if` / `for`, where a
                where = src_of(outer)  # helper that allocates was called (the allocation's line is the helper's)
                fail(op, self.name, f"allocations of one storage_alias_spec are in different regions: the one at "
                                    f"{src_of(inner)} is inside the '{outer.name}' at {where}",
                     "allocate every buffer of a spec at the same nesting level (e.g. at the top of the kernel)",
                     where)
        anchor = ops[0] if ops else _function_start(module, spec)
        tree = self._tree(spec)
        attrs = {"storage": spec["storage"], "buffer_size_bytes": spec["size"], "tlx.spec": sid, "tlx.src": spec["src"]}
        if tree is not None:
            attrs["tlx.overlap"] = json.dumps(tree, separators=(",", ":"))
            attrs["tlx.overlap_src"] = spec["tree_src"] or tree.get("src")
        spec_op = _create("tlx.storage_alias_spec", [_spec_type(spec)], [], anchor.location,
                          ir.InsertionPoint(anchor), attrs)
        if not ops and members:   # (a spec nothing allocates from: tlx-size-definition says so)
            ctx.warn(spec_op, f"[{self.name}] storage_alias_spec has no allocation left: every buffer allocated "
                              "from it is unused and Gluon removed it; it reserves nothing", spec["src"])
        values, last = {}, spec_op
        for aid, member in members.items():
            keep = {"tlx.alloc": aid, "tlx.spec": sid, "tlx.src": member["src"], "tlx.name": member["name"]}
            if aid in live:
                op = live[aid]
                new = _create("tlx.storage_alias_local_alloc", [op.result.type], [spec_op.result], op.location,
                              ir.InsertionPoint(op), keep)
                op.result.replace_all_uses_with(new.result)
                op.erase()
            else:
                new = _create("tlx.storage_alias_local_alloc", [ir.Type.parse(member["type"])], [spec_op.result],
                              spec_op.location, _after(spec_op), dict(keep, **{"tlx.dead": ""}))
                if ops:
                    ctx.warn(new, f"[{self.name}] buffer '{member['name'] or aid}' is never used, so Gluon removed "
                                  "it before lowering; the layout keeps its place", member["src"])
            values[aid] = new.result
            if aid in live or not ops:
                last = new
        if tree is not None:
            # tree ops go right after the spec's last allocation: create them before it, then move it up
            created, ip = [], ir.InsertionPoint(last)
            root = _build_group(tree, values, ip, last.location, created)
            created.append(_create("tlx.set_buffer_overlap", [], [spec_op.result, root], last.location, ip,
                                   {"tlx.src": attrs["tlx.overlap_src"]}))
            last.move_before(created[0])

    def _tree(self, spec):
        """The declared tree, else the spec's one reuse_group tree (seed 000: no set_buffer_overlap needed)."""
        if spec["tree"] is not None:
            return spec["tree"]
        roots = list(spec["implicit"].values())
        if len(roots) > 1:
            raise TlxAliasError(self.name, f"storage_alias_spec has {len(roots)} separate reuse_group trees (built at "
                                    f"{', '.join(r['src'] for r in roots)}) and no set_buffer_overlap",
                         "call spec.set_buffer_overlap(<the tree>) to say which one is the layout", spec["src"])
        return roots[0] if roots else None


def spec_record(module) -> dict:
    """The frontend's record of the module's specs ({} where there is none): storage, size, src, members, tree."""
    attrs = module.operation.attributes
    if FACTS_ATTR not in attrs:
        return {}
    return json.loads(ir.StringAttr(attrs[FACTS_ATTR]).value)


def _spec_type(spec):
    size = spec["size"]
    return ir.Type.parse(f"!tlx.storage_alias_spec<{spec['storage']}{'' if size is None else f', {size}'}>")


def _function_start(module, spec):
    """The first op of the first function with a body: where a spec whose members are all gone goes."""
    for op in walk(module):
        if op.name == "tt.func" and len(op.regions) and len(op.regions[0].blocks):
            return op.regions[0].blocks[0].operations[0]
    raise TlxAliasError(TlxImport.name, "storage_alias_spec has no allocation left and the module has no kernel "
                        "body to check it in", "compile the kernel that creates the spec", spec["src"])


def _after(op):
    block = op.operation.block
    ops = list(block.operations)
    k = next(i for i, o in enumerate(ops) if o.operation == op.operation)
    return ir.InsertionPoint(ops[k + 1]) if k + 1 < len(ops) else ir.InsertionPoint(block)


def _create(name, results, operands, loc, ip, attrs=None):
    op = ir.Operation.create(name, results=results, operands=operands, loc=loc, ip=ip)
    for k, v in (attrs or {}).items():
        if isinstance(v, str):
            set_str(op, k, v)
        elif v is not None:
            set_int(op, k, v)
    return op


def _build_group(node, values, ip, loc, created):
    """Create reuse_group ops bottom-up; returns the group's value."""
    if isinstance(node, str):
        return values[node]
    elems = [_build_group(c, values, ip, loc, created) for c in node["children"]]
    kind = node["kind"]
    op = _create("tlx.reuse_group", [ir.Type.parse(f"!tlx.reuse_group<{kind}>")], elems, loc, ip,
                 {"group_kind": kind, "group_size": node.get("group_size", 1), "tlx.src": node.get("src")})
    created.append(op)
    return op.result


def _depth(op) -> int:
    """How many ops enclose `op`."""
    n, parent = 0, op.parent
    while parent is not None:
        n, parent = n + 1, getattr(parent, "parent", None)
    return n
