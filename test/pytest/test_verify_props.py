"""Property tests of the Z3 proof on random TLX layouts (hypothesis).

A random reuse tree (alternating shared / distinct groups, group_size over single leaves as for P in flash
attention) is placed by `test/tools/synth.py`'s `layout` — the layout rule of the seed — and printed as
Contract-2 IR. Safe layouts must be proven (P1..P5 proven, no "cannot prove"); each hand mutation that
makes a layout unsafe must be caught by the property it breaks, naming the mutated view.
"""
import itertools

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import synth
from tlx_alias import targets
import z3

from tlx_alias.verify import model, prove_module
from tlx_alias.verify.props import NA, PROVEN, VIOLATION, Query
from tlx_alias.verify.model import ReuseTree
from tlx_alias.verify.source import load_generic

SMEM = [((64, 64), "f16", 1), ((64, 64), "f32", 1), ((128, 64), "bf16", 1), ((32, 128), "i8", 1),
        ((64, 128), "f8E4M3FN", 1), ((16, 32), "f32", 1)]
TMEM = [((128, 128), "f32", 1), ((128, 64), "bf16", 1), ((128, 64), "bf16", 2), ((128, 1), "f32", 1),
        ((128, 32), "f32", 1), ((128, 128), "f8E4M3FN", 1)]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@st.composite
def layouts(draw, min_groups=1):
    storage = draw(st.sampled_from(["smem", "tmem"]))
    kinds = SMEM if storage == "smem" else TMEM
    ids = itertools.count()

    def leaf():
        shape, dtype, cs = draw(st.sampled_from(kinds))
        k = next(ids)
        return synth.Leaf(f"a{k}", f"v{k}", shape, dtype, 0, cs)

    def group(kind, depth):
        children = []
        for _ in range(draw(st.integers(1, 3))):
            choice = draw(st.integers(0, 2)) if depth < 2 else 0
            if choice == 0:
                children.append(leaf())
            elif choice == 1 and kind == "distinct":  # sub-tiling: K buffers per group, as P in attention
                children.append(synth.Group("shared", [leaf()], draw(st.sampled_from([2, 4])), f"k.py:{depth}"))
            else:
                children.append(group("distinct" if kind == "shared" else "shared", depth + 1))
        return synth.Group(kind, children, 1, f"k.py:{depth}")

    tree = group(draw(st.sampled_from(["shared", "distinct"])), 0)
    lay = synth.layout(tree, storage, groups=draw(st.integers(min_groups, 3)))
    assume(lay.total <= (targets.TMEM_COLUMNS if storage == "tmem" else targets.smem_limit(100)))
    # the seed's alignment rule (offset and stride multiples of the buffer size; the passes reject others)
    assume(all(leaf.offset % leaf.slot == 0 and leaf.stride % leaf.slot == 0 for leaf in lay.leaves))
    return lay


def prove(lay, **kw):
    loaded = load_generic(synth.module_text(lay, **kw), "k.py")
    with loaded.context:
        return prove_module(loaded.module, "cuda:100", loaded.aliases, "k.py")


def flagged(report, prop, name):
    vs = [v for v in report.verdicts if v.prop == prop and v.status == VIOLATION]
    assert vs, report.text()
    assert any(name in v.detail for v in vs), (name, report.text())


@SETTINGS
@given(layouts())
def test_safe_layouts_are_proven(lay):
    r = prove(lay)
    assert r.ok and not r.unknowns, r.text()
    assert all(v.status in (PROVEN, NA) for v in r.verdicts)


@SETTINGS
@given(layouts())
def test_a_buffers_start_in_the_checks_is_the_declared_layouts(lay):
    """`Query.lo`, buffer i's start in the P1-P4 checks (each constrains i to [0, num)), equals the declared
    formula at every such i, and is linear (no floor division or modulo to branch on) where the layout's slots
    are a progression, as most rings' are."""
    loaded = load_generic(synth.module_text(lay), "k.py")
    with loaded.context:
        (k,) = model.build(loaded.module, loaded.aliases, "k.py")
        q, ctx = Query(k.enc), k.enc.ctx
        views = [v for a in k.allocs for v in a.views if v.tlx]
        assert views
        for v in views:
            start = q.lo(v, q.i)
            at = [z3.simplify(z3.substitute(start, (q.i, z3.IntVal(i, ctx)))).as_long() for i in range(v.num)]
            assert at == [v.lo(i) for i in range(v.num)], v.name
            if v.tlx.affine() is not None:
                assert not any(op in start.sexpr() for op in ("div", "mod")), start


@SETTINGS
@given(layouts(min_groups=2), st.data())
def test_zero_stride_is_caught_by_p2(lay, data):
    leaf = data.draw(st.sampled_from(lay.leaves))
    leaf.stride = 0
    flagged(prove(lay), "P2", leaf.name)


@SETTINGS
@given(layouts(), st.data())
def test_offset_past_the_end_is_caught_by_p1(lay, data):
    leaf = data.draw(st.sampled_from(lay.leaves))
    leaf.offset += lay.total
    flagged(prove(lay), "P1", leaf.name)


@SETTINGS
@given(layouts(), st.data())
def test_distinct_siblings_on_one_offset_are_caught_by_p4(lay, data):
    tree = ReuseTree(lay.tree)
    pairs = [(a, b) for a in lay.leaves for b in lay.leaves
             if a is not b and tree.relation(a.id, b.id)[0] == "distinct"]
    assume(pairs)
    a, b = data.draw(st.sampled_from(pairs))
    assume(a.offset % b.slot == 0)
    b.offset = a.offset
    flagged(prove(lay), "P4", b.name)


@SETTINGS
@given(layouts(min_groups=2), st.data())
def test_a_view_moved_into_the_next_group_is_caught_by_p3(lay, data):
    assume(len(lay.leaves) >= 2)
    a, b = data.draw(st.permutations(lay.leaves))[:2]
    new = a.offset + a.stride
    assume(new % b.slot == 0)
    b.offset = new
    flagged(prove(lay), "P3", b.name)


@SETTINGS
@given(layouts(), st.data())
def test_index_past_num_is_caught_by_p5(lay, data):
    leaf = data.draw(st.sampled_from(lay.leaves))
    bad = leaf.num + 1
    index = {leaf.id: f'%bad = "arith.constant"() <{{{{value = {bad} : i32}}}}> : () -> i32\n'
                      '%{leaf}_i = "arith.remsi"(%iv, %bad) : (i32, i32) -> i32 {loc}'}
    flagged(prove(lay, index=index), "P5", "must be in [0, %d)" % leaf.num)


@SETTINGS
@given(layouts(), st.data())
def test_rewrite_without_the_mod_term_is_caught_by_p5(lay, data):
    grouped = [leaf for leaf in lay.leaves if leaf.group > 1]
    assume(grouped)
    target = data.draw(st.sampled_from(grouped))

    def rewrite(leaf, logical, out):
        phys = synth.rewrite_ops(leaf, logical, out)
        if leaf is target:
            out[-1] = out[-1].replace(f"%{leaf.id}_qso, %{leaf.id}_r", f"%{leaf.id}_qso, %{leaf.id}_o")
        return phys

    flagged(prove(lay, rewrite=rewrite), "P5", target.name)
