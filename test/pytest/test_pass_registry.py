"""The pass registry: one module per pass, its key equal to the pass's own NAME, each runnable alone."""
import pytest

from tlx_alias.python_passes import PIPELINE, get_all_passes
from tlx_alias.python_passes.reuse_tree import Group, Leaf, index_groups, place, size


def test_each_key_is_the_pass_name():
    passes = get_all_passes()
    assert list(passes) == list(PIPELINE)
    for name, module in passes.items():
        assert module.NAME == name
        assert module.__doc__.splitlines()[0].startswith(name)


def test_group_size_keeps_sub_tiles_of_one_group_contiguous():
    # shared(qk, distinct(shared[K=2](p), alpha)): p[j] must sit at (j // 2) * T + (j % 2) * |p|.
    qk, p, alpha = Leaf(None, 128, 2), Leaf(None, 32, 4), Leaf(None, 1, 2)
    tree = Group(None, "shared", 1, [qk, Group(None, "distinct", 1, [Group(None, "shared", 2, [p]), alpha])])
    assert size(tree) == 128 and index_groups(tree) == 2
    placed = {id(leaf): where for leaf, where in place(tree).values()}
    where = placed[id(p)]
    assert (where.offset, where.radices, where.strides) == (0, (2,), (32,))
    assert placed[id(alpha)].offset == 64


@pytest.mark.parametrize("k", [2, 4])
def test_seed_formula_differs_from_the_layout_it_must_produce(k):
    """Seed 000 step 3 writes new = scale*i + offset + i % K; with K > 1 it does not place sub-tiles contiguously."""
    b, T = 32, 128
    want = [(j // k) * (T // b) + (j % k) for j in range(2 * k)]
    scale = T // b // k     # "bytesBetweenBufferGroups divided by group_size"
    seed = [scale * j + (j % k) for j in range(2 * k)]
    assert seed != want
