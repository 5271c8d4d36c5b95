"""Property: every random reuse tree the lowering accepts is proven safe by the Z3 verifier.

Hypothesis draws a reuse tree (alternating shared/distinct groups, group sizes, buffer sizes and counts),
writes it as tlx ops with a loop that indexes every buffer of every allocation, runs the real lowering
(tlx-size-definition -> tlx-buffer-offset -> tlx-storage-alias-allocation -> tlx-export), and hands
the result to `prove_module`. A tree the lowering rejects must be rejected with a TlxAliasError, never a crash.
"""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlx_alias._mlir import ir, new_context
from tlx_alias.errors import TlxAliasError
from tlx_alias.python_passes.pipeline import run
from tlx_alias.verify import prove_module

ALIASES = {"#s": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>",
           "#smem": "#ttg.shared_memory"}
LOWERING = ("tlx-size-definition", "tlx-buffer-offset", "tlx-storage-alias-allocation", "tlx-export")


@st.composite
def trees(draw, kind=None, depth=0):
    """("leaf", elems) or (kind, group_size, [children]); kinds alternate down the tree."""
    if depth > 0 and (depth >= 2 or draw(st.booleans())):
        return ("leaf", 2 ** draw(st.integers(4, 11)))          # 64 B .. 8 KiB of f32
    kind = kind or draw(st.sampled_from(["shared", "distinct"]))
    other = "distinct" if kind == "shared" else "shared"
    k = draw(st.sampled_from([1, 1, 2, 4]))
    children = draw(st.lists(trees(kind=other, depth=depth + 1), min_size=1, max_size=3))
    return (kind, k, children)


def to_mlir(tree, groups):
    """tlx-op IR for `tree`: one allocation per leaf with num = groups x (product of group sizes above)."""
    lines, leaves, n = [], [], [0]

    def emit(node, k_path):
        if node[0] == "leaf":
            name = f"%a{len(leaves)}"
            ty = f"!ttg.memdesc<{groups * k_path}x{node[1]}xf32, #s, #smem, mutable>"
            lines.append(f'{name} = "tlx.storage_alias_local_alloc"(%spec) {{tlx.name = "a{len(leaves)}", '
                         f'tlx.src = "tree.py:{len(leaves) + 1}"}} : (!tlx.storage_alias_spec<smem>) -> {ty}')
            leaves.append((name, ty, groups * k_path, node[1]))
            return name, ty
        kind, k, children = node
        elems = [emit(c, k_path * k) for c in children]
        n[0] += 1
        name = f"%g{n[0]}"
        lines.append(f'{name} = "tlx.reuse_group"({", ".join(e for e, _ in elems)}) {{group_kind = "{kind}", '
                     f'group_size = {k} : i64}} : ({", ".join(t for _, t in elems)}) -> !tlx.reuse_group<{kind}>')
        return name, f"!tlx.reuse_group<{kind}>"

    root, root_ty = emit(tree, 1)
    body = "\n".join(lines)
    uses = []
    for name, ty, num, elems in leaves:
        uses.append(f'''%n{name[1:]} = "arith.constant"() {{value = {num} : i32}} : () -> i32
    "scf.for"(%c0, %n{name[1:]}, %c1) ({{
    ^bb0(%i: i32):
      %v = "ttg.memdesc_index"({name}, %i) : ({ty}, i32) -> !ttg.memdesc<{elems}xf32, #s, #smem, mutable>
      "scf.yield"() : () -> ()
    }}) : (i32, i32, i32) -> ()''')
    return "\n".join(f"{k} = {v}" for k, v in ALIASES.items()) + f'''
"builtin.module"() ({{
  "tt.func"() <{{function_type = () -> (), sym_name = "tree"}}> ({{
    %spec = "tlx.storage_alias_spec"() {{storage = "smem", tlx.src = "tree.py:0"}} : () -> !tlx.storage_alias_spec<smem>
    {body}
    "tlx.set_buffer_overlap"(%spec, {root}) : (!tlx.storage_alias_spec<smem>, {root_ty}) -> ()
    %c0 = "arith.constant"() {{value = 0 : i32}} : () -> i32
    %c1 = "arith.constant"() {{value = 1 : i32}} : () -> i32
    {chr(10).join(uses)}
    "tt.return"() : () -> ()
  }}) : () -> ()
}}) {{ttg.target = "cuda:90"}} : () -> ()
'''


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees(), groups=st.integers(1, 3))
def test_every_tree_the_lowering_accepts_is_proven_safe(tree, groups):
    text = to_mlir(tree, groups)
    module = ir.Module.parse(text, new_context())
    try:
        run(module, LOWERING, aliases=ALIASES, target="cuda:90")
    except TlxAliasError:
        return                       # rejected with a user-facing error (misaligned offset, capacity ...)
    report = prove_module(module, "cuda:90", ALIASES)
    assert report.ok and not report.unknowns, report.text() + "\n" + text
