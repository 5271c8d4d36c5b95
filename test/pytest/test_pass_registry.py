"""The pass registry and the layout arithmetic the passes share (tlx_alias.layout)."""
import dataclasses

import pytest

from tlx_alias import layout
from tlx_alias._mlir import attr_text, attr_value
from tlx_alias.layout import Group, Leaf, ViewLayout
from tlx_alias.python_passes import PIPELINE, get_all_passes


def test_each_key_is_the_pass_name():
    passes = get_all_passes()
    assert list(passes) == list(PIPELINE)
    for name, cls in passes.items():
        assert cls.name == name
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        assert __import__(cls.__module__, fromlist=["x"]).__doc__.splitlines()[0].startswith(name)


def test_group_size_keeps_sub_tiles_of_one_group_contiguous():
    # shared(qk, distinct(shared[K=2](p), alpha)): p[j] must sit at (j // 2) * T + (j % 2) * |p|.
    qk, p, alpha = Leaf("qk", 128, 2), Leaf("p", 32, 4), Leaf("alpha", 1, 2)
    tree = Group(None, "shared", 1, [qk, Group(None, "distinct", 1, [Group(None, "shared", 2, [p]), alpha])])
    assert layout.stride(tree, "tmem") == 128 and layout.index_groups(tree) == 2
    placed = {leaf.ref: where for leaf, where in layout.place(tree, "tmem").values()}
    assert (placed["p"].offset, placed["p"].radices, placed["p"].strides) == (0, (2,), (32,))
    assert placed["alpha"].offset == 64
    view = ViewLayout(0, 128, 32, 4, (2,), (32,))
    assert [view.address(j) for j in range(4)] == [0, 32, 128, 160]


@pytest.mark.parametrize("k", [2, 4])
def test_seed_formula_differs_from_the_layout_it_must_produce(k):
    """Seed 000 step 3 writes new = scale*i + offset + i % K; with K > 1 it does not place sub-tiles contiguously."""
    b, T = 32, 128
    want = [ViewLayout(0, T, b, 2 * k, (k,), (b,)).slot_of(j) for j in range(2 * k)]
    scale = T // b // k     # "bytesBetweenBufferGroups divided by group_size"
    seed = [scale * j + (j % k) for j in range(2 * k)]
    assert seed != want and want == sorted(want)


def test_a_view_base_moves_the_slots_not_the_addresses():
    """A row-window view (base > 0) counts slots from its window; every buffer stays where the layout puts it,
    and the `tlx.view` dictionary round-trips through the MLIR parser."""
    whole = ViewLayout(131072, 196608, 16384, 4, (4,), (16384,))
    window = ViewLayout(131072, 196608, 16384, 4, (4,), (16384,), base=131072)
    assert [window.address(i) for i in range(4)] == [whole.address(i) for i in range(4)]
    assert [window.slot_of(i) for i in range(4)] == [0, 1, 2, 3]
    assert [whole.slot_of(i) for i in range(4)] == [8, 9, 10, 11]
    assert window.span() == whole.span() == (131072, 196608)
    for view in (whole, window):
        assert ViewLayout.from_fields(attr_value(attr_text(view.fields()))) == view


@pytest.mark.parametrize("change, problem", [
    (lambda f: f.pop("slot"), KeyError), (lambda f: f.update(num="4"), ValueError),
    (lambda f: f.update(strides=[]), ValueError), (lambda f: f.update(radices=["4"]), ValueError)])
def test_a_malformed_view_dictionary_is_refused(change, problem):
    fields = ViewLayout(0, 64, 16, 4, (4,), (16,)).fields()
    change(fields)
    with pytest.raises(problem):
        ViewLayout.from_fields(fields)


def test_a_ring_in_one_index_group_is_rewritten_without_division():
    """A ring whose buffers all lie in index group 0 is the progression i + offset/slot (what the lowering
    emits); one whose buffers step over groups or digits is not, and keeps the mixed-radix formula."""
    ring = ViewLayout(131072, 196608, 16384, 4, (4,), (16384,))
    assert ring.affine() == (1, 8)
    assert ViewLayout(131072, 196608, 16384, 4, (4,), (16384,), base=131072).affine() == (1, 0)
    strided = ViewLayout(64, 128, 1, 2)            # alpha of the seed's TMEM tree: one buffer per group
    assert strided.affine() == (128, 64)
    tiles = ViewLayout(0, 128, 32, 4, (2,), (32,))  # p: two sub-tiles per group, slots 0, 1, 4, 5
    assert [tiles.slot_of(i) for i in range(4)] == [0, 1, 4, 5] and tiles.affine() is None



@dataclasses.dataclass(frozen=True)
class _SecondModuleBlock:
    name = "test-second-module-block"

    def apply(self, module, ctx):
        module.regions[0].blocks.append()   # a builtin.module has one block (what Triton's ops leave unchecked
        # here: they are unregistered, so the upstream verifier checks little beyond builtin ops)


@pytest.mark.parametrize("verify_each", [False, True])
def test_a_pass_that_breaks_the_ir_fails_the_pipeline(monkeypatch, verify_each):
    """The plugin verifies once after the last pass, tlx-opt after each: both stop on IR the verifier rejects
    instead of handing the module on."""
    from tlx_alias._mlir import ir, new_context
    from tlx_alias.python_passes import pipeline
    monkeypatch.setattr(pipeline, "get_all_passes", lambda: {"test-second-module-block": _SecondModuleBlock})
    with new_context() as ctx, ir.Location.unknown():
        module = ir.Module.parse('"x.op"() : () -> ()', ctx)
        with pytest.raises(ir.MLIRError, match="region"):
            pipeline.run(module, ("test-second-module-block",), verify_each=verify_each)
